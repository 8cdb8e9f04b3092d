/**
 * The storage layer (@tjm/storage and the Worker's uploader) against a real S3 implementation:
 * OpenStack Swift's s3api (devstack/src/swift). s3rver (tests/storage) cannot show these: it has
 * no ListParts, ListMultipartUploads or UploadPartCopy, and answers AbortMultipartUpload with 405. Every
 * assertion here is what AWS S3 would show through its API. Each test uses its own bucket, so
 * "no incomplete multipart uploads" is checked for the whole bucket.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import {
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { type SwiftServer, startSwift } from "@tjm/devstack/swift";
import {
  CopyMismatchError,
  copyObject,
  createS3Client,
  presignGet,
  putSmallObject,
  StorageUnavailableError,
} from "@tjm/storage";
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
} from "../storage/fixtures.ts";

const execFileAsync = promisify(execFile);
let swift: SwiftServer;
let admin: S3Client;
let dir: string;
let seq = 0;

beforeAll(async () => {
  swift = await startSwift();
  admin = swift.client();
  dir = await mkdtemp(join(tmpdir(), "tjm-s3api-"));
});

afterAll(async () => {
  await swift?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A fresh bucket, file, key and state path per test. */
async function fixture(size: number) {
  const name = `f${++seq}`;
  const bucket = `swift-${name}`;
  await swift.createBucket(bucket);
  const file = join(dir, `${name}.bin`);
  const digest = await writeRandomFile(file, size);
  const key = `jobs/${name}/out.bin`;
  return {
    bucket,
    file,
    digest,
    key,
    uri: `s3://${bucket}/${key}`,
    statePath: join(dir, `${name}.state.json`),
  };
}

function uploader(client: S3Client, options: Omit<UploadOptions, "client">) {
  return new MultipartUploader({ client, retry: FAST_RETRY, ...options });
}

/** A client whose requests for part `from` and later die as a reset connection would. */
function failingFromPart(from: number): S3Client {
  const client = createS3Client(swift.settings);
  client.middlewareStack.add(
    (next) => async (args) => {
      const { PartNumber } = args.input as { PartNumber?: number };
      if (PartNumber !== undefined && PartNumber >= from) throw connectionReset();
      return next(args);
    },
    { step: "finalizeRequest", name: "dropPartsFrom" },
  );
  return client;
}

async function incompleteUploads(bucket: string) {
  const answer = await admin.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return (answer.Uploads ?? []).map((upload) => ({ key: upload.Key, uploadId: upload.UploadId }));
}

async function objectKeys(bucket: string) {
  const answer = await admin.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (answer.Contents ?? []).map((object) => ({ key: object.Key, size: object.Size }));
}

async function storedParts(bucket: string, key: string, uploadId: string) {
  const answer = await admin.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
  return (answer.Parts ?? []).map((part) => ({
    PartNumber: part.PartNumber,
    ETag: part.ETag,
    Size: part.Size,
  }));
}

function headObject(bucket: string, key: string) {
  return admin.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).catch((error: unknown) => error);
}

describe("MultipartUploader against Swift s3api", () => {
  it("resumes after a Worker restart: ListParts shows the kept parts, and only the missing ones are sent", async () => {
    const { bucket, file, digest, key, uri, statePath } = await fixture(21 * MIB);

    // The first Worker dies on part 3: parts 1-2 are stored, 3-5 are not.
    const failing = failingFromPart(3);
    const error = await uploader(failing, { file, uri, statePath, partSize: 5 * MIB })
      .upload()
      .catch((e: unknown) => e);
    failing.destroy();
    expect(error).toBeInstanceOf(StorageUnavailableError);
    const saved = await readUploadState(statePath);
    if (saved.status !== "ok") throw new Error(`state is ${saved.status}`);
    expect(saved.state.parts.map((part) => part.PartNumber)).toEqual([1, 2]);

    // What the store holds before the resume, through the S3 API.
    expect(await incompleteUploads(bucket)).toEqual([{ key, uploadId: saved.state.uploadId }]);
    expect(await storedParts(bucket, key, saved.state.uploadId)).toEqual(
      saved.state.parts.map((part) => ({ ...part, Size: 5 * MIB })),
    );
    expect(await headObject(bucket, key)).toMatchObject({ name: "NotFound" });

    // A new Worker process: new client, new uploader, the same state file.
    const client = createS3Client(swift.settings);
    const sent = recordRequests(client);
    const result = await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    client.destroy();
    expect(result).toMatchObject({ bytes: 21 * MIB, sha256: digest, partsSent: 3, partsResumed: 2 });
    expect(partsSent(sent)).toEqual([3, 4, 5]);
    expect(count(sent, "CreateMultipartUploadCommand")).toBe(0);
    expect(count(sent, "CompleteMultipartUploadCommand")).toBe(1);
    expect(result.etag).toMatch(/^"[0-9a-f]{32}-5"$/);

    expect(sha256(await readObject(admin, bucket, key))).toBe(digest);
    expect(await headObject(bucket, key)).toMatchObject({ ContentLength: 21 * MIB, ETag: result.etag });
    expect(await objectKeys(bucket)).toEqual([{ key, size: 21 * MIB }]);
    expect(await incompleteUploads(bucket)).toEqual([]);
    expect((await readUploadState(statePath)).status).toBe("absent");
  });

  it("a part the store kept but the state missed (death between answer and state write) is adopted, not sent again", async () => {
    const { bucket, file, digest, key, uri, statePath } = await fixture(21 * MIB);

    // Part 3 reaches the store; its answer is lost as the process dies. Parts 4-5 never leave.
    const dying = createS3Client(swift.settings);
    dying.middlewareStack.add(
      (next) => async (args) => {
        const { PartNumber } = args.input as { PartNumber?: number };
        if (PartNumber !== undefined && PartNumber >= 4) throw connectionReset();
        const answer = await next(args);
        if (PartNumber === 3) throw connectionReset();
        return answer;
      },
      { step: "finalizeRequest", name: "dieAfterPart3" },
    );
    const error = await uploader(dying, { file, uri, statePath, partSize: 5 * MIB, concurrency: 1 })
      .upload()
      .catch((e: unknown) => e);
    dying.destroy();
    expect(error).toBeInstanceOf(StorageUnavailableError);
    const saved = await readUploadState(statePath);
    if (saved.status !== "ok") throw new Error(`state is ${saved.status}`);
    expect(saved.state.parts.map((part) => part.PartNumber)).toEqual([1, 2]);
    expect((await storedParts(bucket, key, saved.state.uploadId)).map((part) => part.PartNumber)).toEqual([
      1, 2, 3,
    ]);

    const client = createS3Client(swift.settings);
    const sent = recordRequests(client);
    const logger = capturingLogger();
    const result = await uploader(client, { file, uri, statePath, partSize: 5 * MIB, logger }).upload();
    client.destroy();
    expect(result).toMatchObject({ sha256: digest, partsSent: 2, partsResumed: 3 });
    expect(partsSent(sent)).toEqual([4, 5]);
    expect(count(sent, "ListPartsCommand")).toBe(1);
    expect(logger.lines.find((line) => line.msg === "resuming multipart upload")?.fields).toMatchObject({
      partsStored: 3,
      partsAdopted: 1,
      partsLost: 0,
    });
    expect(sha256(await readObject(admin, bucket, key))).toBe(digest);
    expect(await incompleteUploads(bucket)).toEqual([]);
  });

  it("a part the state lists but the store lost is sent again", async () => {
    const { bucket, file, digest, key, uri, statePath } = await fixture(16 * MIB);
    const error = await uploader(failingFromPart(3), { file, uri, statePath, partSize: 5 * MIB })
      .upload()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    const saved = await readUploadState(statePath);
    if (saved.status !== "ok") throw new Error(`state is ${saved.status}`);
    // The store has part 1 only as other bytes: its ETag no longer matches the state's.
    await admin.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: key,
        UploadId: saved.state.uploadId,
        PartNumber: 1,
        Body: Buffer.alloc(5 * MIB, 7),
      }),
    );

    const client = createS3Client(swift.settings);
    const sent = recordRequests(client);
    const result = await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    client.destroy();
    expect(partsSent(sent)).toEqual([1, 3, 4]);
    expect(result).toMatchObject({ sha256: digest, partsResumed: 1, partsSent: 3 });
    expect(sha256(await readObject(admin, bucket, key))).toBe(digest);
  });

  it("a part damaged in transit is refused by the store (the signed SHA-256 does not match) and sent again", async () => {
    const { bucket, file, digest, key, uri, statePath } = await fixture(11 * MIB);
    const client = createS3Client(swift.settings);
    const sent = recordRequests(client);
    let damaged = 0;
    // After signing: one bit of part 2's first try flips on its way to the store.
    client.middlewareStack.add(
      (next) => async (args) => {
        const { PartNumber } = args.input as { PartNumber?: number };
        const request = args.request as { body?: unknown };
        if (PartNumber === 2 && damaged === 0 && Buffer.isBuffer(request.body)) {
          damaged++;
          const copy = Buffer.from(request.body);
          copy[1000] = (copy[1000] ?? 0) ^ 1;
          request.body = copy;
        }
        return next(args);
      },
      { step: "finalizeRequest", name: "damagePart2", priority: "low" },
    );
    const logger = capturingLogger();
    const result = await uploader(client, { file, uri, statePath, partSize: 5 * MIB, logger }).upload();
    client.destroy();
    expect(damaged).toBe(1);
    expect(partsSent(sent)).toEqual([1, 2, 2, 3]);
    expect(JSON.stringify(logger.lines)).toContain("BadDigest");
    expect(result.sha256).toBe(digest);
    expect(sha256(await readObject(admin, bucket, key))).toBe(digest);
  });

  it("a single PutObject damaged in transit is refused (its signed SHA-256 is the one putSmallObject returns) and sent again", async () => {
    const { bucket, file, digest, key, uri } = await fixture(3 * MIB);
    const client = createS3Client(swift.settings);
    let damaged = 0;
    const signedDigests: string[] = [];
    const checksumHeaders: string[] = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { body?: unknown; headers: Record<string, string> };
        signedDigests.push(request.headers["x-amz-content-sha256"] ?? "");
        checksumHeaders.push(
          ...Object.keys(request.headers).filter((name) => /content-md5|x-amz-checksum/i.test(name)),
        );
        if (damaged === 0 && Buffer.isBuffer(request.body)) {
          damaged++;
          const copy = Buffer.from(request.body);
          copy[1000] = (copy[1000] ?? 0) ^ 1;
          request.body = copy;
        }
        return next(args);
      },
      { step: "finalizeRequest", name: "damageBody", priority: "low" },
    );
    const logger = capturingLogger();
    const result = await putSmallObject(client, uri, await readFile(file), "application/octet-stream", {
      retry: FAST_RETRY,
      logger,
    });
    client.destroy();
    expect(damaged).toBe(1);
    // Swift's s3api (Debian 12's 2.30) answers a body that does not match its signed SHA-256
    // with BadDigest; nothing else was there to check (no Content-MD5, no x-amz-checksum-*).
    expect(checksumHeaders).toEqual([]);
    expect(JSON.stringify(logger.lines)).toContain("BadDigest");
    expect(result.sha256).toBe(digest);
    expect(signedDigests).toEqual([digest, digest]);
    expect(sha256(await readObject(admin, bucket, key))).toBe(digest);
  });

  it("abort() by a restarted Worker removes the multipart upload: none listed, no object, NoSuchUpload", async () => {
    const { bucket, file, key, uri, statePath } = await fixture(11 * MIB);
    const failing = failingFromPart(3);
    await expect(
      uploader(failing, { file, uri, statePath, partSize: 5 * MIB }).upload(),
    ).rejects.toBeInstanceOf(StorageUnavailableError);
    failing.destroy();
    const saved = await readUploadState(statePath);
    if (saved.status !== "ok") throw new Error(`state is ${saved.status}`);
    expect(await incompleteUploads(bucket)).toHaveLength(1);

    const client = createS3Client(swift.settings);
    const sent = recordRequests(client);
    const logger = capturingLogger();
    await uploader(client, { file, uri, statePath, partSize: 5 * MIB, logger }).abort();
    client.destroy();
    expect(count(sent, "AbortMultipartUploadCommand")).toBe(1);
    expect(logger.lines.filter((line) => line.level === "warn")).toEqual([]);
    expect((await readUploadState(statePath)).status).toBe("absent");

    expect(await incompleteUploads(bucket)).toEqual([]);
    await expect(storedParts(bucket, key, saved.state.uploadId)).rejects.toMatchObject({
      name: "NoSuchUpload",
    });
    expect(await headObject(bucket, key)).toMatchObject({ name: "NotFound" });
    expect(await objectKeys(bucket)).toEqual([]);
  });

  it("abort() during an upload stops it and leaves no upload and no object", async () => {
    const { bucket, file, key, uri, statePath } = await fixture(21 * MIB);
    const client = createS3Client(swift.settings);
    const sent = recordRequests(client);
    client.middlewareStack.add(
      (next) => async (args) => {
        if ((args.input as { PartNumber?: number }).PartNumber !== undefined) await delay(150);
        return next(args);
      },
      { step: "finalizeRequest", name: "slowParts" },
    );
    const upload = uploader(client, { file, uri, statePath, partSize: 5 * MIB, concurrency: 1 });
    const outcome = upload.upload().catch((e: unknown) => e);
    // Once a part is stored, so the store has something to abort.
    while (partsSent(sent).length < 2) await delay(20);
    await upload.abort();
    client.destroy();
    expect(await outcome).toMatchObject({ name: "AbortError" });
    expect(count(sent, "AbortMultipartUploadCommand")).toBe(1);
    expect(count(sent, "CompleteMultipartUploadCommand")).toBe(0);
    expect((await readUploadState(statePath)).status).toBe("absent");
    expect(await incompleteUploads(bucket)).toEqual([]);
    expect(await headObject(bucket, key)).toMatchObject({ name: "NotFound" });
    expect(await objectKeys(bucket)).toEqual([]);
  });
});

describe("a Swift proxy crash mid-upload", () => {
  it("pauses the upload (StorageUnavailableError) and, once restarted, the resume leaves exactly one object", async () => {
    const { bucket, file, digest, key, uri, statePath } = await fixture(26 * MIB);
    const client = createS3Client(swift.settings, { connectionTimeoutMs: 1_000, socketTimeoutMs: 2_000 });
    let killing: Promise<void> | undefined;
    const upload = uploader(client, {
      file,
      uri,
      statePath,
      partSize: 5 * MIB,
      concurrency: 2,
      onProgress: ({ uploadedBytes }) => {
        if (!killing && uploadedBytes >= 10 * MIB) killing = swift.killProxy();
      },
    });
    const started = Date.now();
    const error = await upload.upload().catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    await killing;
    expect(killing).toBeDefined();
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as Error).message).toMatch(/ECONNREFUSED|ECONNRESET|EPIPE|socket hang up/);
    expect(elapsed).toBeLessThan(FAST_RETRY.budgetMs + 5_000);
    const saved = await readUploadState(statePath);
    if (saved.status !== "ok") throw new Error(`state is ${saved.status}`);
    const kept = saved.state.parts.map((part) => part.PartNumber);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThan(6);

    // Still down, past the budget: a new try pauses again and the state stays as it was.
    await expect(upload.upload()).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(await readUploadState(statePath)).toEqual(saved);

    await swift.startProxy();
    // The store kept every part the state lists (and perhaps one whose answer was lost).
    const before = await storedParts(bucket, key, saved.state.uploadId);
    expect(before).toEqual(
      expect.arrayContaining(saved.state.parts.map((part) => expect.objectContaining(part))),
    );
    expect(await incompleteUploads(bucket)).toEqual([{ key, uploadId: saved.state.uploadId }]);

    // The resume adopts whatever the store holds, a part whose answer was lost included.
    const stored = before.map((part) => part.PartNumber);
    const sent = recordRequests(client);
    const result = await upload.upload();
    client.destroy();
    expect(result).toMatchObject({ bytes: 26 * MIB, sha256: digest, partsResumed: stored.length });
    expect(partsSent(sent)).toEqual([1, 2, 3, 4, 5, 6].filter((n) => !stored.includes(n)));
    expect(count(sent, "CreateMultipartUploadCommand")).toBe(0);
    expect(sha256(await readObject(admin, bucket, key))).toBe(digest);
    expect(await objectKeys(bucket)).toEqual([{ key, size: 26 * MIB }]);
    expect(await incompleteUploads(bucket)).toEqual([]);
  });
});

describe("copyObject against Swift s3api", () => {
  // Swift 2.30's s3api checks x-amz-copy-source-if-match against the SLO manifest's own ETag,
  // not the "<md5>-<parts>" ETag it reports for a multipart object, and answers 412 (S3 accepts
  // it). Every output a Worker stages is a multipart upload, so this is how the Manager's
  // promotion runs on Swift: the pinned copy is refused, a second HEAD shows the source
  // unchanged, the copy runs unpinned and the copy's size is checked with a HEAD.
  it("copies a finished multipart upload to another key server-side (CopyObject), as the Manager promotes outputs", async () => {
    const { bucket, file, digest, key, uri, statePath } = await fixture(21 * MIB);
    const client = createS3Client(swift.settings);
    const uploaded = await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    const sent = recordRequests(client);
    const logger = capturingLogger();
    const copied = await copyObject(client, uri, `s3://${bucket}/final/out.bin`, {
      retry: FAST_RETRY,
      expectedBytes: 21 * MIB,
      logger,
    });
    client.destroy();
    expect(copied).toMatchObject({ bytes: 21 * MIB, multipart: false });
    expect(sent.map((request) => request.command)).toEqual([
      "HeadObjectCommand",
      "CopyObjectCommand",
      "HeadObjectCommand",
      "CopyObjectCommand",
      "HeadObjectCommand",
    ]);
    expect(logger.lines.filter((line) => line.level === "warn")).toEqual([
      {
        level: "warn",
        msg: "the store refused the copy's ETag condition; copying unpinned",
        fields: { from: uri, to: `s3://${bucket}/final/out.bin`, etag: uploaded.etag },
      },
    ]);
    expect(sha256(await readObject(admin, bucket, "final/out.bin"))).toBe(digest);
    // The source is untouched.
    expect(await headObject(bucket, key)).toMatchObject({ ContentLength: 21 * MIB, ETag: uploaded.etag });
    expect(await objectKeys(bucket)).toEqual([
      { key: "final/out.bin", size: 21 * MIB },
      { key, size: 21 * MIB },
    ]);
    expect(await incompleteUploads(bucket)).toEqual([]);
  });

  it("pins a copy of a single-part object (Swift honours a plain ETag) and sends nothing more", async () => {
    const { bucket, key } = await fixture(0);
    const body = randomBytes(3 * MIB);
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    const client = createS3Client(swift.settings);
    const sent = recordRequests(client);
    const copied = await copyObject(client, `s3://${bucket}/${key}`, `s3://${bucket}/final/single.bin`, {
      retry: FAST_RETRY,
      expectedBytes: 3 * MIB,
    });
    client.destroy();
    expect(copied).toMatchObject({ bytes: 3 * MIB, multipart: false });
    expect(sent.map((request) => request.command)).toEqual(["HeadObjectCommand", "CopyObjectCommand"]);
    expect(sha256(await readObject(admin, bucket, "final/single.bin"))).toBe(sha256(body));
  });

  it("copies in parts (UploadPartCopy with ranges, pinned to the source ETag) and leaves no upload behind", async () => {
    const { bucket, key } = await fixture(0);
    const body = randomBytes(21 * MIB);
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    const client = createS3Client(swift.settings);
    const sent = recordRequests(client);
    const copied = await copyObject(client, `s3://${bucket}/${key}`, `s3://${bucket}/final/parts.bin`, {
      retry: FAST_RETRY,
      multipartThreshold: 5 * MIB,
      partSize: 8 * MIB,
    });
    client.destroy();
    expect(copied).toMatchObject({ bytes: 21 * MIB, multipart: true });
    expect(copied.etag).toMatch(/-3"$/);
    expect(count(sent, "UploadPartCopyCommand")).toBe(3);
    expect(sha256(await readObject(admin, bucket, "final/parts.bin"))).toBe(sha256(body));
    expect(await incompleteUploads(bucket)).toEqual([]);
  });

  it("copies a multipart-uploaded source in parts: the refused pinned copy is aborted, the unpinned one checked by size", async () => {
    const { bucket, file, digest, uri, statePath } = await fixture(11 * MIB);
    const client = createS3Client(swift.settings);
    await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    const sent = recordRequests(client);
    const copied = await copyObject(client, uri, `s3://${bucket}/final/parts.bin`, {
      retry: FAST_RETRY,
      multipartThreshold: 5 * MIB,
      partSize: 8 * MIB,
      concurrency: 1,
      expectedBytes: 11 * MIB,
    });
    client.destroy();
    expect(copied).toMatchObject({ bytes: 11 * MIB, multipart: true });
    expect(sent.map((request) => request.command)).toEqual([
      "HeadObjectCommand",
      "CreateMultipartUploadCommand",
      "UploadPartCopyCommand", // pinned: 412
      "AbortMultipartUploadCommand",
      "HeadObjectCommand",
      "CreateMultipartUploadCommand",
      "UploadPartCopyCommand",
      "UploadPartCopyCommand",
      "CompleteMultipartUploadCommand",
      "HeadObjectCommand",
    ]);
    expect(sha256(await readObject(admin, bucket, "final/parts.bin"))).toBe(digest);
    expect(await incompleteUploads(bucket)).toEqual([]);
  });

  it("refuses a source whose size is not the expected one, and writes nothing", async () => {
    const { bucket, file, key, uri, statePath } = await fixture(6 * MIB);
    const client = createS3Client(swift.settings);
    await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    const sent = recordRequests(client);
    const error = await copyObject(client, uri, `s3://${bucket}/final/out.bin`, {
      retry: FAST_RETRY,
      expectedBytes: 6 * MIB + 1,
    }).catch((e: unknown) => e);
    client.destroy();
    expect(error).toBeInstanceOf(CopyMismatchError);
    expect((error as Error).message).toBe(`${uri} holds ${6 * MIB} bytes where ${6 * MIB + 1} were expected`);
    expect(sent.map((request) => request.command)).toEqual(["HeadObjectCommand"]);
    expect(await objectKeys(bucket)).toEqual([{ key, size: 6 * MIB }]);
  });

  it("refuses an unpinned copy that does not have the source's size (the source was rewritten after the refusal)", async () => {
    const { bucket, file, key, uri, statePath } = await fixture(6 * MIB);
    const client = createS3Client(swift.settings);
    await uploader(client, { file, uri, statePath, partSize: 5 * MIB }).upload();
    // Another writer replaces the source with 1 MiB just before the unpinned copy reads it.
    client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { CopySource?: string; CopySourceIfMatch?: string };
        if (input.CopySource !== undefined && input.CopySourceIfMatch === undefined) {
          await admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: randomBytes(MIB) }));
        }
        return next(args);
      },
      { step: "initialize", name: "rewriteSource" },
    );
    const error = await copyObject(client, uri, `s3://${bucket}/final/out.bin`, {
      retry: FAST_RETRY,
      expectedBytes: 6 * MIB,
    }).catch((e: unknown) => e);
    client.destroy();
    expect(error).toBeInstanceOf(CopyMismatchError);
    expect(error).toMatchObject({
      uri: `s3://${bucket}/final/out.bin`,
      expectedBytes: 6 * MIB,
      actualBytes: MIB,
    });
  });
});

describe("a presigned GET", () => {
  it("serves ranges, refuses a tampered signature, and ffmpeg reads and seeks an mp4 whose index is at the end", async () => {
    const { key, uri, statePath } = await fixture(0);
    // 6 s of H.264 + AAC; the mp4 muxer writes the moov atom last, so a reader must seek.
    const file = join(dir, "clip.mp4");
    await execFileAsync("ffmpeg", [
      ...["-v", "error", "-f", "lavfi", "-i", "testsrc=duration=6:size=320x240:rate=25"],
      ...["-f", "lavfi", "-i", "sine=duration=6", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"],
      ...["-shortest", file],
    ]);
    const client = createS3Client(swift.settings);
    const uploaded = await uploader(client, { file, uri, statePath, contentType: "video/mp4" }).upload();
    const url = await presignGet(client, uri, 300);
    client.destroy();

    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(sha256(Buffer.from(await whole.arrayBuffer()))).toBe(uploaded.sha256);
    const range = await fetch(url, { headers: { Range: "bytes=0-99" } });
    expect(range.status).toBe(206);
    expect(range.headers.get("content-range")).toBe(`bytes 0-99/${uploaded.bytes}`);
    expect((await range.arrayBuffer()).byteLength).toBe(100);
    const tampered = await fetch(
      url.replace(/X-Amz-Signature=([0-9a-f])/, (_, c) => `X-Amz-Signature=${c === "0" ? "1" : "0"}`),
    );
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain("SignatureDoesNotMatch");

    const ranged = (log: string) =>
      log.split("\n").filter((line) => line.includes(`/${key}`) && / 206 /.test(line)).length;
    const rangedBefore = ranged(await swift.proxyLog());
    const probe = await execFileAsync("ffprobe", [
      ...["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", url],
    ]);
    expect(Number(probe.stdout.trim())).toBeCloseTo(6, 0);
    // Seek to 4 s and decode one frame from there.
    const seek = await execFileAsync("ffmpeg", [
      ...["-v", "error", "-ss", "4", "-i", url, "-frames:v", "1", "-f", "framemd5", "-"],
    ]);
    expect(seek.stdout).toMatch(/^0,\s+\d+,\s+\d+,/m);
    // Reaching the moov atom at the end took range requests (206 in the proxy's access log).
    expect(ranged(await swift.proxyLog())).toBeGreaterThan(rangedBefore);
  });
});
