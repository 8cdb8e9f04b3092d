/**
 * The multipart path of copyObject (objects over 5 GiB). s3rver answers UploadPartCopy with
 * 501 NotImplemented, so this path is checked against a scripted client that records the
 * commands and answers like S3, not against a server. The single CopyObject path is tested
 * against s3rver in tests/storage/objects.test.ts.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { copyObject } from "./copy.ts";
import { StorageFailedError } from "./errors.ts";

type Sent = { command: string; input: Record<string, unknown> };

function scriptedClient(size: number, failPart?: number) {
  const sent: Sent[] = [];
  const client = {
    async send(command: { input: Record<string, unknown> }) {
      const { input } = command;
      if (command instanceof HeadObjectCommand) {
        sent.push({ command: "HeadObject", input });
        return {
          ContentLength: size,
          ETag: '"source-etag"',
          ContentType: "video/mp4",
          Metadata: { job: "1" },
        };
      }
      if (command instanceof CreateMultipartUploadCommand) {
        sent.push({ command: "CreateMultipartUpload", input });
        return { UploadId: "upload-1" };
      }
      if (command instanceof UploadPartCopyCommand) {
        sent.push({ command: "UploadPartCopy", input });
        if (input.PartNumber === failPart) {
          throw new S3ServiceException({
            name: "PreconditionFailed",
            $fault: "client",
            $metadata: { httpStatusCode: 412 },
            message: "At least one of the pre-conditions you specified did not hold",
          });
        }
        return { CopyPartResult: { ETag: `"etag-${input.PartNumber}"` } };
      }
      if (command instanceof CompleteMultipartUploadCommand) {
        sent.push({ command: "CompleteMultipartUpload", input });
        return { ETag: '"final-3"' };
      }
      if (command instanceof AbortMultipartUploadCommand) {
        sent.push({ command: "AbortMultipartUpload", input });
        return {};
      }
      throw new Error("unexpected command");
    },
  };
  return { client: client as unknown as S3Client, sent };
}

describe("copyObject above the single-copy limit (scripted client)", () => {
  it("copies 512 MiB-style ranges pinned to the source ETag and completes them in order", async () => {
    const { client, sent } = scriptedClient(10);
    const result = await copyObject(client, "s3://src-bucket/a/b.mp4", "s3://dst-bucket/c.mp4", {
      multipartThreshold: 5,
      partSize: 4,
    });
    expect(result).toEqual({ bytes: 10, etag: '"final-3"', multipart: true });
    expect(sent.find((s) => s.command === "CreateMultipartUpload")?.input).toMatchObject({
      Bucket: "dst-bucket",
      Key: "c.mp4",
      ContentType: "video/mp4",
      Metadata: { job: "1" },
    });
    const copies = sent.filter((s) => s.command === "UploadPartCopy").map((s) => s.input);
    expect(copies.map((c) => [c.PartNumber, c.CopySourceRange]).sort()).toEqual([
      [1, "bytes=0-3"],
      [2, "bytes=4-7"],
      [3, "bytes=8-9"],
    ]);
    for (const copy of copies) {
      expect(copy).toMatchObject({ CopySource: "src-bucket/a/b.mp4", CopySourceIfMatch: '"source-etag"' });
    }
    expect(sent.at(-1)).toEqual({
      command: "CompleteMultipartUpload",
      input: {
        Bucket: "dst-bucket",
        Key: "c.mp4",
        UploadId: "upload-1",
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: '"etag-1"' },
            { PartNumber: 2, ETag: '"etag-2"' },
            { PartNumber: 3, ETag: '"etag-3"' },
          ],
        },
      },
    });
  });

  it("aborts the multipart upload when a part fails (the source changed)", async () => {
    const { client, sent } = scriptedClient(10, 2);
    const error = await copyObject(client, "s3://src-bucket/a.mp4", "s3://dst-bucket/c.mp4", {
      multipartThreshold: 5,
      partSize: 4,
      concurrency: 1,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageFailedError);
    expect((error as Error).message).toContain("PreconditionFailed");
    expect(sent.map((s) => s.command)).toEqual([
      "HeadObject",
      "CreateMultipartUpload",
      "UploadPartCopy",
      "UploadPartCopy",
      "AbortMultipartUpload",
    ]);
  });
});
