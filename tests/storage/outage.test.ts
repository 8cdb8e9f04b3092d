/**
 * A storage outage, made real with a TCP proxy between the client and s3rver: cut, the
 * proxy refuses connections and drops the open ones (parts in flight die mid-body).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { createS3Client, StorageUnavailableError } from "@tjm/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadObject } from "../../worker-agent/src/storage/download.ts";
import { MultipartUploader } from "../../worker-agent/src/storage/upload.ts";
import { readUploadState } from "../../worker-agent/src/storage/upload-state.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";
import { FAST_RETRY, MIB, readObject, recordRequests, sha256, writeRandomFile } from "./fixtures.ts";

const BUCKET = "media-out";
let s3: S3Server;
let proxy: TcpProxy;
let dir: string;

beforeAll(async () => {
  s3 = await startS3();
  await s3.createBucket(BUCKET);
  proxy = await TcpProxy.start({ host: "127.0.0.1", port: s3.port });
  dir = await mkdtemp(join(tmpdir(), "tjm-outage-"));
});

afterAll(async () => {
  await proxy?.close();
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function clientThroughProxy() {
  return createS3Client(
    { ...s3.settings, endpoint: `http://127.0.0.1:${proxy.port}` },
    { connectionTimeoutMs: 1_000, socketTimeoutMs: 2_000 },
  );
}

describe("a storage outage", () => {
  it("pauses an upload within its retry budget, and the upload resumes once the store is back", async () => {
    const file = join(dir, "big.bin");
    const digest = await writeRandomFile(file, 26 * MIB);
    const statePath = join(dir, "big.state.json");
    const client = clientThroughProxy();
    let cutAt: number | undefined;
    const uploader = new MultipartUploader({
      client,
      file,
      uri: `s3://${BUCKET}/outage/big.bin`,
      statePath,
      partSize: 5 * MIB,
      concurrency: 2,
      retry: FAST_RETRY,
      onProgress: ({ uploadedBytes }) => {
        if (cutAt === undefined && uploadedBytes >= 10 * MIB) {
          cutAt = Date.now();
          void proxy.cut();
        }
      },
    });

    const error = await uploader.upload().catch((e: unknown) => e);
    expect(cutAt).toBeDefined();
    // From the outage, not from the start: the first 10 MiB take longer on a loaded machine.
    const elapsed = Date.now() - (cutAt ?? Number.NaN);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as Error).message).toMatch(/ECONNREFUSED|ECONNRESET|EPIPE|socket hang up/);
    // The budget bounds when the last retry starts; a request then fails fast (refused).
    expect(elapsed).toBeLessThan(FAST_RETRY.budgetMs + 2_000);
    const saved = await readUploadState(statePath);
    if (saved.status !== "ok") throw new Error(`state is ${saved.status}`);
    const stored = saved.state.parts.map((part) => part.PartNumber);
    expect(stored.length).toBeGreaterThanOrEqual(2);
    expect(stored.length).toBeLessThan(6);

    await proxy.restore();
    const sent = recordRequests(client);
    const result = await uploader.upload();
    expect(result).toMatchObject({ bytes: 26 * MIB, sha256: digest, partsResumed: stored.length });
    const resent = sent.filter((r) => r.command === "UploadPartCommand").map((r) => r.partNumber);
    expect(resent.sort()).toEqual([1, 2, 3, 4, 5, 6].filter((n) => !stored.includes(n)));
    expect(sha256(await readObject(s3.client(), BUCKET, "outage/big.bin"))).toBe(digest);
    client.destroy();
  });

  it("makes a download give up within its budget, and it succeeds once the store is back", async () => {
    const body = Buffer.alloc(3 * MIB, 7);
    await s3.client().send(new PutObjectCommand({ Bucket: BUCKET, Key: "outage/in.bin", Body: body }));
    const client = clientThroughProxy();
    const destination = join(dir, "in.bin");
    await proxy.cut();
    const started = Date.now();
    const error = await downloadObject(client, `s3://${BUCKET}/outage/in.bin`, destination, {
      retry: FAST_RETRY,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).attempts).toBe(FAST_RETRY.maxAttempts);
    expect((error as Error).message).toContain("ECONNREFUSED");
    expect(Date.now() - started).toBeLessThan(FAST_RETRY.budgetMs + 2_000);

    await proxy.restore();
    const result = await downloadObject(client, `s3://${BUCKET}/outage/in.bin`, destination, {
      retry: FAST_RETRY,
    });
    expect(result).toMatchObject({ bytes: body.length, sha256: sha256(body) });
    client.destroy();
  });
});
