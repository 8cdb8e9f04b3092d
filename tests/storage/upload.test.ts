/**
 * The resumable multipart uploader against a real S3-compatible server (s3rver). s3rver has
 * no ListParts and answers AbortMultipartUpload with 405, so what abort() does in a store
 * that supports it is not tested here; only that the 405 is tolerated.
 */
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import {
  CompleteMultipartUploadCommand,
  HeadObjectCommand,
  NoSuchUpload,
  type S3Client,
} from "@aws-sdk/client-s3";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { createS3Client, StorageRefusedError, StorageUnavailableError } from "@tjm/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MultipartUploader, type UploadOptions } from "../../worker-agent/src/storage/upload.ts";
import { readUploadState } from "../../worker-agent/src/storage/upload-state.ts";
import {
  capturingLogger,
  connectionReset,
  count,
  FAST_RETRY,
  MIB,
  partsSent,
  readObject,
  recordRequests,
  sha256,
  writeRandomFile,
} from "./fixtures.ts";

const BUCKET = "media-out";
let s3: S3Server;
let dir: string;
let seq = 0;

beforeAll(async () => {
  s3 = await startS3();
  await s3.createBucket(BUCKET);
  dir = await mkdtemp(join(tmpdir(), "tjm-upload-"));
});

afterAll(async () => {
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A fresh file, key and state path per test, so tests never share an upload. */
async function fixture(size: number) {
  const name = `f${++seq}`;
  const file = join(dir, `${name}.bin`);
  const digest = await writeRandomFile(file, size);
  return { file, digest, key: `jobs/${name}/out.bin`, statePath: join(dir, "state", `${name}.json`) };
}

function uploader(client: S3Client, options: Omit<UploadOptions, "client">) {
  return new MultipartUploader({ client, retry: FAST_RETRY, ...options });
}

async function headObject(client: S3Client, key: string) {
  return client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).catch((error: unknown) => error);
}

describe.each(["WHEN_REQUIRED", "WHEN_SUPPORTED"] as const)("with checksums %s", (checksums) => {
  it("a small file goes up as one part and reads back byte-identical, stored without aws-chunked framing", async () => {
    const { file, digest, key, statePath } = await fixture(MIB + 12345);
    const client = createS3Client({ ...s3.settings, checksums });
    const sent = recordRequests(client);
    const result = await uploader(client, { file, uri: `s3://${BUCKET}/${key}`, statePath }).upload();
    expect(result).toMatchObject({ bytes: MIB + 12345, sha256: digest, partsSent: 1, partsResumed: 0 });
    expect(partsSent(sent)).toEqual([1]);
    expect(sha256(await readObject(s3.client(), BUCKET, key))).toBe(digest);
    expect(await s3.storedBytes(BUCKET, key)).toBe(MIB + 12345);
    expect((await readUploadState(statePath)).status).toBe("absent");
    client.destroy();
  });
});

describe("MultipartUploader against s3rver", () => {
  it("a 21 MiB file goes up in five 5 MiB parts, reporting progress, and reads back byte-identical", async () => {
    const { file, digest, key, statePath } = await fixture(21 * MIB);
    const client = createS3Client(s3.settings);
    const sent = recordRequests(client);
    const progress: number[] = [];
    const result = await uploader(client, {
      file,
      uri: `s3://${BUCKET}/${key}`,
      statePath,
      partSize: 5 * MIB,
      onProgress: ({ uploadedBytes, totalBytes }) => {
        expect(totalBytes).toBe(21 * MIB);
        progress.push(uploadedBytes);
      },
    }).upload();
    expect(result).toMatchObject({ bytes: 21 * MIB, sha256: digest, partsSent: 5 });
    expect(result.etag).toMatch(/^"[0-9a-f]+(-\d+)?"$/);
    expect(partsSent(sent)).toEqual([1, 2, 3, 4, 5]);
    expect(count(sent, "CreateMultipartUploadCommand")).toBe(1);
    expect(count(sent, "CompleteMultipartUploadCommand")).toBe(1);
    expect(progress[0]).toBe(0);
    expect(progress.at(-1)).toBe(21 * MIB);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
    expect(sha256(await readObject(s3.client(), BUCKET, key))).toBe(digest);
    expect(await s3.storedBytes(BUCKET, key)).toBe(21 * MIB);
    client.destroy();
  });

  it("an empty file becomes an empty object", async () => {
    const { file, digest, key, statePath } = await fixture(0);
    const client = createS3Client(s3.settings);
    const result = await uploader(client, { file, uri: `s3://${BUCKET}/${key}`, statePath }).upload();
    expect(result).toMatchObject({ bytes: 0, sha256: digest, partsSent: 1 });
    expect((await readObject(s3.client(), BUCKET, key)).length).toBe(0);
    client.destroy();
  });

  it("complete: false leaves the upload incomplete and lists its parts; called again, it returns the same upload and sends nothing", async () => {
    const { file, digest, key, statePath } = await fixture(11 * MIB);
    const client = createS3Client(s3.settings);
    const sent = recordRequests(client);
    const options = { file, uri: `s3://${BUCKET}/${key}`, statePath, partSize: 5 * MIB, complete: false };
    const first = await uploader(client, options).upload();
    expect(first).toMatchObject({ bytes: 11 * MIB, sha256: digest, etag: undefined, partsSent: 3 });
    expect(first.incomplete?.parts.map(({ partNumber, bytes }) => [partNumber, bytes])).toEqual([
      [1, 5 * MIB],
      [2, 5 * MIB],
      [3, MIB],
    ]);
    expect(first.incomplete?.parts.every((part) => /^"[0-9a-f]{32}"$/.test(part.etag))).toBe(true);
    expect(count(sent, "CompleteMultipartUploadCommand")).toBe(0);
    expect(await headObject(client, key)).toMatchObject({ name: "NotFound" });
    // The state stays (the Worker's retry before its report goes out returns the same upload).
    const again = await uploader(client, options).upload();
    expect(again).toMatchObject({ partsSent: 0, partsResumed: 3, incomplete: first.incomplete });
    client.destroy();
  });

  it("resumes after a failure: the state keeps parts 1-2, and a new uploader sends only parts 3-5", async () => {
    const { file, digest, key, statePath } = await fixture(21 * MIB);
    const uri = `s3://${BUCKET}/${key}`;

    // The connection drops on every request for part 3 and later.
    const failing = createS3Client(s3.settings);
    failing.middlewareStack.add(
      (next) => async (args) => {
        const { PartNumber } = args.input as { PartNumber?: number };
        if (PartNumber !== undefined && PartNumber >= 3) throw connectionReset();
        return next(args);
      },
      { step: "finalizeRequest", name: "dropPartsFromThree" },
    );
    const error = await uploader(failing, { file, uri, statePath, partSize: 5 * MIB })
      .upload()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^upload part [345] ${uri}: storage unavailable after 3 attempt\\(s\\): TimeoutError: read ECONNRESET`,
      ),
    );
    const saved = await readUploadState(statePath);
    if (saved.status !== "ok") throw new Error(`state is ${saved.status}`);
    expect(saved.state.parts.map((part) => part.PartNumber)).toEqual([1, 2]);
    expect((await stat(statePath)).mode & 0o777).toBe(0o600);
    expect(await headObject(s3.client(), key)).toMatchObject({ name: "NotFound" });
    failing.destroy();

    const client = createS3Client(s3.settings);
    const sent = recordRequests(client);
    const result = await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    expect(result).toMatchObject({ bytes: 21 * MIB, sha256: digest, partsSent: 3, partsResumed: 2 });
    expect(partsSent(sent)).toEqual([3, 4, 5]);
    expect(count(sent, "CreateMultipartUploadCommand")).toBe(0);
    expect(sha256(await readObject(s3.client(), BUCKET, key))).toBe(digest);
    expect((await readUploadState(statePath)).status).toBe("absent");
    client.destroy();
  });

  it("a file rewritten since the last try starts a new upload after aborting the old one (405 tolerated)", async () => {
    const { file, key, statePath } = await fixture(11 * MIB);
    const uri = `s3://${BUCKET}/${key}`;
    const failing = createS3Client(s3.settings);
    failing.middlewareStack.add(
      (next) => async (args) => {
        if ((args.input as { PartNumber?: number }).PartNumber === 2) throw connectionReset();
        return next(args);
      },
      { step: "finalizeRequest", name: "dropPartTwo" },
    );
    await expect(
      uploader(failing, { file, uri, statePath, partSize: 5 * MIB }).upload(),
    ).rejects.toBeInstanceOf(StorageUnavailableError);
    const before = await readUploadState(statePath);
    if (before.status !== "ok") throw new Error(`state is ${before.status}`);
    failing.destroy();

    const digest = await writeRandomFile(file, 11 * MIB);
    await utimes(file, new Date(), new Date(Date.now() + 5000));
    const client = createS3Client(s3.settings);
    const sent = recordRequests(client);
    const logger = capturingLogger();
    const result = await uploader(client, { file, uri, statePath, partSize: 5 * MIB, logger }).upload();
    expect(result).toMatchObject({ sha256: digest, partsSent: 3, partsResumed: 0 });
    expect(count(sent, "AbortMultipartUploadCommand")).toBe(1);
    expect(count(sent, "CreateMultipartUploadCommand")).toBe(1);
    expect(logger.lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining([
        "upload state is stale; aborting that upload and starting over",
        "the store does not support AbortMultipartUpload; its parts are left behind",
      ]),
    );
    expect(logger.lines.find((line) => line.msg.startsWith("upload state is stale"))?.fields).toMatchObject({
      reason: "the file changed since the upload began",
    });
    expect(sha256(await readObject(s3.client(), BUCKET, key))).toBe(digest);
    client.destroy();
  });

  it("a state file for another key is not resumed", async () => {
    const first = await fixture(6 * MIB);
    const client = createS3Client(s3.settings);
    const failing = createS3Client(s3.settings);
    failing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "CompleteMultipartUploadCommand") throw connectionReset();
        return next(args);
      },
      { step: "finalizeRequest", name: "dropComplete" },
    );
    const uri = `s3://${BUCKET}/${first.key}`;
    await expect(
      uploader(failing, { file: first.file, uri, statePath: first.statePath, partSize: 5 * MIB }).upload(),
    ).rejects.toBeInstanceOf(StorageUnavailableError);
    failing.destroy();

    const otherKey = `${first.key}.other`;
    const sent = recordRequests(client);
    const logger = capturingLogger();
    const result = await uploader(client, {
      file: first.file,
      uri: `s3://${BUCKET}/${otherKey}`,
      statePath: first.statePath,
      partSize: 5 * MIB,
      logger,
    }).upload();
    expect(result).toMatchObject({ sha256: first.digest, partsSent: 2, partsResumed: 0 });
    expect(partsSent(sent)).toEqual([1, 2]);
    expect(logger.lines.find((line) => line.msg.startsWith("upload state is stale"))?.fields).toMatchObject({
      reason: `the state is for ${uri}, not s3://${BUCKET}/${otherKey}`,
    });
    expect(sha256(await readObject(s3.client(), BUCKET, otherKey))).toBe(first.digest);
    client.destroy();
  });

  it("a completion whose answer was lost is recognised on the retry (S3 then answers NoSuchUpload)", async () => {
    const { file, digest, key, statePath } = await fixture(6 * MIB);
    const client = createS3Client(s3.settings);
    let completes = 0;
    // s3rver answers a repeated completion with 500 InternalError where S3 answers 404
    // NoSuchUpload; the second branch plays S3's part.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "CompleteMultipartUploadCommand") return next(args);
        completes++;
        if (completes === 1) {
          await next(args);
          throw connectionReset();
        }
        throw new NoSuchUpload({
          message: "The specified upload does not exist.",
          $metadata: { httpStatusCode: 404 },
        });
      },
      { step: "finalizeRequest", name: "loseCompleteAnswer" },
    );
    const result = await uploader(client, {
      file,
      uri: `s3://${BUCKET}/${key}`,
      statePath,
      partSize: 5 * MIB,
    }).upload();
    expect(completes).toBe(2);
    expect(result).toMatchObject({ bytes: 6 * MIB, sha256: digest });
    expect(result.etag).toMatch(/^"/);
    expect(sha256(await readObject(s3.client(), BUCKET, key))).toBe(digest);
    client.destroy();
  });

  it("a completion whose answer was lost in an earlier pass is recognised when the upload resumes from its state (s3rver answers 500)", async () => {
    const { file, digest, key, statePath } = await fixture(11 * MIB);
    const client = createS3Client(s3.settings);
    const uri = `s3://${BUCKET}/${key}`;
    const left = await uploader(client, {
      file,
      uri,
      statePath,
      partSize: 5 * MIB,
      complete: false,
    }).upload();
    // The store completed it; the pass that asked lost the answer and paused, its state kept.
    await s3.client().send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: key,
        UploadId: left.incomplete?.uploadId,
        MultipartUpload: {
          Parts: left.incomplete?.parts.map(({ partNumber, etag }) => ({
            PartNumber: partNumber,
            ETag: etag,
          })),
        },
      }),
    );
    const sent = recordRequests(client);
    const result = await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    expect(result).toMatchObject({ bytes: 11 * MIB, sha256: digest, partsSent: 0, partsResumed: 3 });
    expect(count(sent, "CompleteMultipartUploadCommand")).toBe(1);
    expect(await readUploadState(statePath)).toMatchObject({ status: "absent" });
    expect(sha256(await readObject(s3.client(), BUCKET, key))).toBe(digest);
    client.destroy();
  });

  it("a missing bucket is refused at once, without retries, naming the bucket", async () => {
    const { file, statePath } = await fixture(MIB);
    const client = createS3Client(s3.settings);
    const sent = recordRequests(client);
    const started = Date.now();
    const error = await uploader(client, {
      file,
      uri: "s3://no-such-bucket/out.bin",
      statePath,
      retry: { maxAttempts: 5, budgetMs: 30_000, initialDelayMs: 2_000, maxDelayMs: 16_000 },
    })
      .upload()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageRefusedError);
    expect((error as StorageRefusedError).reason).toBe("no-such-bucket");
    expect((error as Error).message).toBe(
      'upload s3://no-such-bucket/out.bin: bucket "no-such-bucket" does not exist',
    );
    expect(sent.map((request) => request.command)).toEqual(["CreateMultipartUploadCommand"]);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await readUploadState(statePath)).status).toBe("absent");
    client.destroy();
  });

  it("an unknown access key is refused at once as access denied", async () => {
    const { file, statePath } = await fixture(MIB);
    const client = createS3Client({ ...s3.settings, accessKeyId: "NOT-A-KEY" });
    const error = await uploader(client, { file, uri: `s3://${BUCKET}/denied.bin`, statePath })
      .upload()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageRefusedError);
    expect((error as StorageRefusedError).reason).toBe("access-denied");
    expect((error as Error).message).toContain(`access denied to bucket "${BUCKET}" (InvalidAccessKeyId:`);
    client.destroy();
  });

  it("abort() sends AbortMultipartUpload, tolerates s3rver's 405, and removes the state file", async () => {
    const { file, key, statePath } = await fixture(11 * MIB);
    const client = createS3Client(s3.settings);
    const sent = recordRequests(client);
    client.middlewareStack.add(
      (next) => async (args) => {
        if ((args.input as { PartNumber?: number }).PartNumber === 3) throw connectionReset();
        return next(args);
      },
      { step: "finalizeRequest", name: "dropPartThree" },
    );
    const logger = capturingLogger();
    const upload = uploader(client, {
      file,
      uri: `s3://${BUCKET}/${key}`,
      statePath,
      partSize: 5 * MIB,
      logger,
    });
    await expect(upload.upload()).rejects.toBeInstanceOf(StorageUnavailableError);
    expect((await readUploadState(statePath)).status).toBe("ok");
    await upload.abort();
    expect(count(sent, "AbortMultipartUploadCommand")).toBe(1);
    expect(logger.lines.find((line) => line.msg.includes("AbortMultipartUpload"))?.fields).toMatchObject({
      status: 405,
    });
    expect((await readUploadState(statePath)).status).toBe("absent");
    client.destroy();
  });

  it("abort() during an upload stops it, aborts the multipart upload, and nothing is completed", async () => {
    const { file, key, statePath } = await fixture(21 * MIB);
    const client = createS3Client(s3.settings);
    const sent = recordRequests(client);
    client.middlewareStack.add(
      (next) => async (args) => {
        if ((args.input as { PartNumber?: number }).PartNumber !== undefined) await delay(100);
        return next(args);
      },
      { step: "finalizeRequest", name: "slowParts" },
    );
    const upload = uploader(client, {
      file,
      uri: `s3://${BUCKET}/${key}`,
      statePath,
      partSize: 5 * MIB,
      concurrency: 1,
    });
    const running = upload.upload();
    const outcome = running.catch((e: unknown) => e);
    await delay(250);
    await upload.abort();
    expect(await outcome).toMatchObject({ name: "AbortError" });
    expect(count(sent, "AbortMultipartUploadCommand")).toBe(1);
    expect(count(sent, "CompleteMultipartUploadCommand")).toBe(0);
    expect(partsSent(sent).length).toBeLessThan(5);
    expect((await readUploadState(statePath)).status).toBe("absent");
    expect(await headObject(s3.client(), key)).toMatchObject({ name: "NotFound" });
    client.destroy();
  });

  it("a caller's cancel stops the upload with the cancel's reason and keeps the state for later", async () => {
    const { file, digest, key, statePath } = await fixture(11 * MIB);
    const uri = `s3://${BUCKET}/${key}`;
    const client = createS3Client(s3.settings);
    const controller = new AbortController();
    const cancel = new Error("job cancelled");
    const error = await uploader(client, {
      file,
      uri,
      statePath,
      partSize: 5 * MIB,
      concurrency: 1,
      signal: controller.signal,
      onProgress: ({ uploadedBytes }) => {
        if (uploadedBytes >= 5 * MIB) controller.abort(cancel);
      },
    })
      .upload()
      .catch((e: unknown) => e);
    expect(error).toBe(cancel);
    const saved = await readUploadState(statePath);
    if (saved.status !== "ok") throw new Error(`state is ${saved.status}`);
    expect(saved.state.parts.map((part) => part.PartNumber)).toEqual([1]);

    const result = await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    expect(result).toMatchObject({ sha256: digest, partsResumed: 1, partsSent: 2 });
    client.destroy();
  });

  it("an unreadable state file is replaced by a new upload", async () => {
    const { file, digest, key } = await fixture(MIB);
    const statePath = join(dir, "state-corrupt.json");
    await writeFile(statePath, '{"version":1,"uploadId":"trunc');
    const client = createS3Client(s3.settings);
    const logger = capturingLogger();
    const result = await uploader(client, { file, uri: `s3://${BUCKET}/${key}`, statePath, logger }).upload();
    expect(result.sha256).toBe(digest);
    expect(logger.lines.map((line) => line.msg)).toContain(
      "upload state file is unreadable; starting a new upload",
    );
    await expect(readFile(statePath)).rejects.toMatchObject({ code: "ENOENT" });
    client.destroy();
  });
});
