/**
 * How a complete output goes up (worker-agent/src/attempts/output-uploads.ts), against s3rver:
 * one that fits a part as a single PutObject when the Worker completes its own upload; a larger
 * one, one with an upload already under way, and any under a multipart commit through the
 * resumable multipart uploader.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { createS3Client } from "@tjm/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutputUploads } from "../../worker-agent/src/attempts/output-uploads.ts";
import { FAST_RETRY, MIB, readObject, recordRequests, writeRandomFile } from "./fixtures.ts";

const BUCKET = "media-out";
let s3: S3Server;
let dir: string;

beforeAll(async () => {
  s3 = await startS3();
  await s3.createBucket(BUCKET);
  dir = await mkdtemp(join(tmpdir(), "tjm-output-uploads-"));
});

afterAll(async () => {
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function outputUploads(name: string, options: { complete: boolean; partSize: number }) {
  const client = createS3Client(s3.settings);
  const sent = recordRequests(client);
  const uploads = new OutputUploads({
    client,
    uri: (id) => `s3://${BUCKET}/${name}/${id}`,
    statePath: (id) => join(dir, `${name}.${id}.upload.json`),
    partLimit: undefined,
    partSize: options.partSize,
    concurrency: 4,
    complete: options.complete,
    retry: FAST_RETRY,
  });
  return { client, sent, uploads, commands: () => sent.map((request) => request.command) };
}

describe("a complete output's upload", () => {
  it("fits one part: one PutObject, the object equal to the file", async () => {
    const file = join(dir, "small.bin");
    const sha256 = await writeRandomFile(file, 3 * MIB);
    const { client, uploads, commands } = outputUploads("small", { complete: true, partSize: 5 * MIB });
    const result = await uploads.upload({ id: "o1", path: file });
    expect(result).toEqual({ bytes: 3 * MIB, sha256 });
    expect(commands()).toEqual(["PutObjectCommand"]);
    expect((await readObject(client, BUCKET, "small/o1")).length).toBe(3 * MIB);
  });

  it("larger than a part: the multipart uploader", async () => {
    const file = join(dir, "large.bin");
    const sha256 = await writeRandomFile(file, 6 * MIB);
    const { uploads, commands } = outputUploads("large", { complete: true, partSize: 5 * MIB });
    expect(await uploads.upload({ id: "o1", path: file })).toMatchObject({ bytes: 6 * MIB, sha256 });
    expect(commands()).toContain("CreateMultipartUploadCommand");
    expect(commands()).not.toContain("PutObjectCommand");
  });

  it("an upload under way (a state file) is resumed, never replaced by a PutObject", async () => {
    const file = join(dir, "resumed.bin");
    await writeRandomFile(file, 3 * MIB);
    await writeFile(join(dir, "resumed.o1.upload.json"), "{}");
    const { uploads, commands } = outputUploads("resumed", { complete: true, partSize: 5 * MIB });
    await uploads.upload({ id: "o1", path: file });
    expect(commands()).not.toContain("PutObjectCommand");
    expect(commands()).toContain("CompleteMultipartUploadCommand");
  });

  it("under a multipart commit even a small output stays an incomplete multipart upload", async () => {
    const file = join(dir, "commit.bin");
    await writeRandomFile(file, 3 * MIB);
    const { uploads, commands } = outputUploads("commit", { complete: false, partSize: 5 * MIB });
    const result = await uploads.upload({ id: "o1", path: file });
    expect(result.incomplete?.parts).toHaveLength(1);
    expect(commands()).not.toContain("PutObjectCommand");
    expect(commands()).not.toContain("CompleteMultipartUploadCommand");
  });
});
