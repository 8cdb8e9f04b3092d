/**
 * commitMultipartUpload against a scripted client: the order of its requests, which uploads it
 * aborts, and a completion whose answer was lost. The same paths run against Swift in
 * tests/storage-swift/multipart-commit.test.ts.
 */
import { createHash } from "node:crypto";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  type S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { CommitMismatchError, commitMultipartUpload } from "./commit.ts";
import { multipartEtag } from "./parts.ts";

const URI = "s3://media-out/movies/42/720p.mp4";
const md5 = (text: string) => `"${createHash("md5").update(text).digest("hex")}"`;
const PARTS = [
  { partNumber: 1, etag: md5("one"), bytes: 5_242_880 },
  { partNumber: 2, etag: md5("two"), bytes: 1_000 },
];
const UPLOAD = { uri: URI, uploadId: "ours", parts: PARTS, bytes: 5_243_880 };
const NO_RETRY = { retry: { maxAttempts: 1 } };

const noSuchUpload = () =>
  new S3ServiceException({
    name: "NoSuchUpload",
    $fault: "client",
    $metadata: { httpStatusCode: 404 },
    message: "The specified upload does not exist",
  });

interface Script {
  /** ListParts: the stored parts, or "gone". */
  stored: { PartNumber: number; ETag: string; Size: number }[] | "gone";
  /** ListMultipartUploads pages: [key, uploadId] of each upload. */
  uploadPages: [string, string][][];
  /** CompleteMultipartUpload: an ETag, or "gone" (an earlier try completed it). */
  complete: string | "gone";
  head?: { ContentLength: number; ETag: string };
}

function scriptedClient(script: Script) {
  const sent: string[] = [];
  let page = 0;
  const client = {
    async send(command: { input: Record<string, unknown> }) {
      const { input } = command;
      if (command instanceof ListPartsCommand) {
        sent.push("ListParts");
        if (script.stored === "gone") throw noSuchUpload();
        return { Parts: script.stored, IsTruncated: false };
      }
      if (command instanceof ListMultipartUploadsCommand) {
        sent.push(`ListMultipartUploads ${input.Prefix} from ${input.KeyMarker ?? "start"}`);
        const uploads = script.uploadPages[page] ?? [];
        const more = ++page < script.uploadPages.length;
        return {
          Uploads: uploads.map(([Key, UploadId]) => ({ Key, UploadId })),
          IsTruncated: more,
          NextKeyMarker: more ? `marker-${page}` : undefined,
          NextUploadIdMarker: more ? `upload-${page}` : undefined,
        };
      }
      if (command instanceof AbortMultipartUploadCommand) {
        sent.push(`AbortMultipartUpload ${input.UploadId}`);
        return {};
      }
      if (command instanceof CompleteMultipartUploadCommand) {
        sent.push(`CompleteMultipartUpload ${input.UploadId}`);
        if (script.complete === "gone") throw noSuchUpload();
        return { ETag: script.complete };
      }
      if (command instanceof HeadObjectCommand) {
        sent.push("HeadObject");
        return script.head;
      }
      throw new Error("unexpected command");
    },
  };
  return { client: client as unknown as S3Client, sent };
}

const storedAsReported = PARTS.map((part) => ({
  PartNumber: part.partNumber,
  ETag: part.etag,
  Size: part.bytes,
}));
const committedEtag = multipartEtag(PARTS.map((part) => part.etag)) as string;

describe("commitMultipartUpload", () => {
  it("checks the parts, aborts every other upload at exactly this key over every page, then completes", async () => {
    const { client, sent } = scriptedClient({
      stored: storedAsReported,
      uploadPages: [
        [
          ["movies/42/720p.mp4", "zombie"],
          ["movies/42/720p.mp4.bak", "another-key"],
        ],
        [
          ["movies/42/720p.mp4", "ours"],
          ["movies/42/720p.mp4", "late-zombie"],
        ],
      ],
      complete: committedEtag,
    });
    const result = await commitMultipartUpload(client, UPLOAD, NO_RETRY);
    expect(result).toEqual({ etag: committedEtag, recognised: false, abortedUploads: 2 });
    expect(sent).toEqual([
      "ListParts",
      "ListMultipartUploads movies/42/720p.mp4 from start",
      "ListMultipartUploads movies/42/720p.mp4 from marker-1",
      "AbortMultipartUpload zombie",
      "AbortMultipartUpload late-zombie",
      "CompleteMultipartUpload ours",
    ]);
  });

  it("a completion whose answer was lost is recognised by the object's multipart ETag", async () => {
    const { client } = scriptedClient({
      stored: storedAsReported,
      uploadPages: [[]],
      complete: "gone",
      head: { ContentLength: UPLOAD.bytes, ETag: committedEtag },
    });
    expect(await commitMultipartUpload(client, UPLOAD, NO_RETRY)).toEqual({
      etag: committedEtag,
      recognised: true,
      abortedUploads: 0,
    });
  });

  it("an upload gone with another object at the key is a mismatch, not a commit", async () => {
    const { client, sent } = scriptedClient({
      stored: "gone",
      uploadPages: [[]],
      complete: "gone",
      head: { ContentLength: UPLOAD.bytes, ETag: md5("someone else's") },
    });
    await expect(commitMultipartUpload(client, UPLOAD, NO_RETRY)).rejects.toBeInstanceOf(CommitMismatchError);
    expect(sent).toEqual(["ListParts", "HeadObject"]);
  });

  it("refuses a part list out of order, or one that does not add up, before asking the store anything", async () => {
    const { client, sent } = scriptedClient({
      stored: storedAsReported,
      uploadPages: [[]],
      complete: committedEtag,
    });
    const reversed = { ...UPLOAD, parts: [...PARTS].reverse() };
    await expect(commitMultipartUpload(client, reversed, NO_RETRY)).rejects.toThrow(
      "part 1 is out of order in the part list",
    );
    await expect(commitMultipartUpload(client, { ...UPLOAD, bytes: 1 }, NO_RETRY)).rejects.toThrow(
      `the reported parts add up to ${UPLOAD.bytes} bytes where the output has 1`,
    );
    expect(sent).toEqual([]);
  });
});
