/**
 * copyObject when the store answers 412 to the ETag condition, and its size checks, against a
 * scripted client that answers like Swift 2.30's s3api (which refuses x-amz-copy-source-if-match
 * for a multipart ETag). The same paths run against Swift in tests/storage-swift/s3api.test.ts.
 */
import {
  CopyObjectCommand,
  HeadObjectCommand,
  NotFound,
  type S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { CopyMismatchError, copyObject } from "./copy.ts";
import { StorageFailedError } from "./errors.ts";

const FROM = "s3://media-out/.tjm-staging/job/attempt/720p";
const TO = "s3://media-out/movies/42/720p.mp4";
const MULTIPART_ETAG = '"0123456789abcdef0123456789abcdef-3"';

const preconditionFailed = () =>
  new S3ServiceException({
    name: "PreconditionFailed",
    $fault: "client",
    $metadata: { httpStatusCode: 412 },
    message: "At least one of the pre-conditions you specified did not hold",
  });

interface Script {
  /** What HEAD answers for the source, one entry per HEAD (the last one repeats). */
  sourceHeads: { ContentLength: number; ETag: string }[];
  /** Whether a pinned CopyObject is refused with 412. */
  refusePinned: boolean;
  /** What HEAD answers for the destination; none: 404. */
  destinationBytes?: number;
}

function scriptedClient(script: Script) {
  const sent: { command: string; input: Record<string, unknown> }[] = [];
  let sourceHeads = 0;
  const client = {
    async send(command: { input: Record<string, unknown> }) {
      const { input } = command;
      if (command instanceof HeadObjectCommand) {
        sent.push({ command: "HeadObject", input });
        if (`s3://${input.Bucket}/${input.Key}` === TO) {
          if (script.destinationBytes === undefined) {
            throw new NotFound({ message: "UnknownError", $metadata: { httpStatusCode: 404 } });
          }
          return { ContentLength: script.destinationBytes };
        }
        const heads = script.sourceHeads;
        return heads[Math.min(sourceHeads++, heads.length - 1)];
      }
      if (command instanceof CopyObjectCommand) {
        sent.push({ command: "CopyObject", input });
        if (input.CopySourceIfMatch !== undefined && script.refusePinned) throw preconditionFailed();
        return { CopyObjectResult: { ETag: '"copied"' } };
      }
      throw new Error("unexpected command");
    },
  };
  return { client: client as unknown as S3Client, sent };
}

const commands = (sent: { command: string; input: Record<string, unknown> }[]) =>
  sent.map(({ command, input }) =>
    command === "CopyObject"
      ? `CopyObject if-match ${input.CopySourceIfMatch ?? "none"}`
      : `HeadObject ${input.Key}`,
  );

describe("copyObject pinned to the source's ETag", () => {
  it("sends the source's ETag as the copy's condition and needs no check of the copy", async () => {
    const { client, sent } = scriptedClient({
      sourceHeads: [{ ContentLength: 1000, ETag: MULTIPART_ETAG }],
      refusePinned: false,
    });
    const result = await copyObject(client, FROM, TO, { expectedBytes: 1000 });
    expect(result).toEqual({ bytes: 1000, etag: '"copied"', multipart: false });
    expect(commands(sent)).toEqual([
      "HeadObject .tjm-staging/job/attempt/720p",
      `CopyObject if-match ${MULTIPART_ETAG}`,
    ]);
  });

  it("refuses a source whose size is not the expected one before writing anything", async () => {
    const { client, sent } = scriptedClient({
      sourceHeads: [{ ContentLength: 999, ETag: MULTIPART_ETAG }],
      refusePinned: false,
    });
    const error = await copyObject(client, FROM, TO, { expectedBytes: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CopyMismatchError);
    expect(error).toMatchObject({ uri: FROM, expectedBytes: 1000, actualBytes: 999 });
    expect((error as Error).message).toBe(`${FROM} holds 999 bytes where 1000 were expected`);
    expect(commands(sent)).toEqual(["HeadObject .tjm-staging/job/attempt/720p"]);
  });
});

describe("copyObject when the store refuses the condition for a multipart ETag (Swift 2.30)", () => {
  it("copies again without it, then checks the copy's size", async () => {
    const { client, sent } = scriptedClient({
      sourceHeads: [{ ContentLength: 1000, ETag: MULTIPART_ETAG }],
      refusePinned: true,
      destinationBytes: 1000,
    });
    const warnings: unknown[] = [];
    const logger = {
      warn: (msg: string, fields?: Record<string, unknown>) => warnings.push({ msg, ...fields }),
    };
    const result = await copyObject(client, FROM, TO, { expectedBytes: 1000, logger });
    expect(result).toEqual({ bytes: 1000, etag: '"copied"', multipart: false });
    expect(commands(sent)).toEqual([
      "HeadObject .tjm-staging/job/attempt/720p",
      `CopyObject if-match ${MULTIPART_ETAG}`,
      // The source still has the ETag the condition named: the store, not the source, said no.
      "HeadObject .tjm-staging/job/attempt/720p",
      "CopyObject if-match none",
      "HeadObject movies/42/720p.mp4",
    ]);
    expect(warnings).toEqual([
      {
        msg: "the store refused the copy's ETag condition; copying unpinned",
        from: FROM,
        to: TO,
        etag: MULTIPART_ETAG,
      },
    ]);
  });

  it("fails when the copy does not have the source's size (the source was rewritten meanwhile)", async () => {
    const { client } = scriptedClient({
      sourceHeads: [{ ContentLength: 1000, ETag: MULTIPART_ETAG }],
      refusePinned: true,
      destinationBytes: 640,
    });
    const error = await copyObject(client, FROM, TO, { expectedBytes: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CopyMismatchError);
    expect(error).toMatchObject({ uri: TO, expectedBytes: 1000, actualBytes: 640 });
  });

  it("fails when the copy is not there at all", async () => {
    const { client } = scriptedClient({
      sourceHeads: [{ ContentLength: 1000, ETag: MULTIPART_ETAG }],
      refusePinned: true,
    });
    const error = await copyObject(client, FROM, TO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CopyMismatchError);
    expect(error).toMatchObject({ uri: TO, expectedBytes: 1000, actualBytes: undefined });
    expect((error as Error).message).toBe(`no object at ${TO}, where 1000 bytes were expected`);
  });

  it("does not copy again when the source's ETag changed: the condition did its job", async () => {
    const { client, sent } = scriptedClient({
      sourceHeads: [
        { ContentLength: 1000, ETag: MULTIPART_ETAG },
        { ContentLength: 1000, ETag: '"fedcba9876543210fedcba9876543210-3"' },
      ],
      refusePinned: true,
    });
    const error = await copyObject(client, FROM, TO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageFailedError);
    expect((error as Error).message).toContain("PreconditionFailed");
    expect(commands(sent)).toEqual([
      "HeadObject .tjm-staging/job/attempt/720p",
      `CopyObject if-match ${MULTIPART_ETAG}`,
      "HeadObject .tjm-staging/job/attempt/720p",
    ]);
  });

  it("does not copy again for a plain (single-part) ETag: S3 honours those, so the source changed", async () => {
    const { client, sent } = scriptedClient({
      sourceHeads: [{ ContentLength: 1000, ETag: '"0123456789abcdef0123456789abcdef"' }],
      refusePinned: true,
    });
    await expect(copyObject(client, FROM, TO)).rejects.toBeInstanceOf(StorageFailedError);
    expect(commands(sent)).toEqual([
      "HeadObject .tjm-staging/job/attempt/720p",
      'CopyObject if-match "0123456789abcdef0123456789abcdef"',
    ]);
  });
});
