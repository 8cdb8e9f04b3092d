/**
 * How a complete output goes up (worker-agent/src/attempts/output-uploads.ts), against s3rver:
 * one that fits a part as a single PutObject when the Worker completes its own upload; a larger
 * one, one with an upload already under way, and any under a multipart commit through the
 * resumable multipart uploader. And one written front to back that outgrows the part size
 * fixed before it was written: sent again with bigger parts.
 */
import { randomBytes } from "node:crypto";
import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { waitFor } from "@tjm/devstack/services";
import type { PlanOutput } from "@tjm/protocol";
import { createS3Client } from "@tjm/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutputUploads } from "../../worker-agent/src/attempts/output-uploads.ts";
import { count, FAST_RETRY, MIB, readObject, recordRequests, sha256, writeRandomFile } from "./fixtures.ts";

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

describe("an output written front to back that outgrows part size × part limit", () => {
  it("is sent again with bigger parts, and the object equals the file", async () => {
    const PART = 5 * MIB;
    const PART_LIMIT = 2;
    // 23 MiB: five 5 MiB parts, more than the limit; in two parts of 12 MiB it fits.
    const SIZE = 23 * MIB;
    const file = join(dir, "outgrown.ts");
    const client = createS3Client(s3.settings);
    const sent = recordRequests(client);
    const uploads = new OutputUploads({
      client,
      uri: (id) => `s3://${BUCKET}/outgrown/${id}`,
      statePath: (id) => join(dir, `outgrown.${id}.upload.json`),
      partLimit: PART_LIMIT,
      partSize: PART,
      concurrency: 4,
      complete: true,
      retry: FAST_RETRY,
    });
    const output: PlanOutput = {
      id: "o1",
      kind: "FILE",
      container: "mpegts",
      destinationUri: `s3://${BUCKET}/outgrown/o1`,
      video: { codec: "h264", height: 360, preset: "fastest" },
    };
    uploads.begin({ outputs: [output], paths: { o1: file }, durationMs: 4000, sourceHeight: 360 });

    // The writer (as ffmpeg writing MPEG-TS): past part 2's end, then on once part 2 went up.
    const bytes = randomBytes(SIZE);
    await writeFile(file, bytes.subarray(0, 2 * PART + MIB));
    const uploadParts = () => sent.filter((request) => request.command === "UploadPartCommand");
    await waitFor("part 2 sent while the file grows", async () => uploadParts().length > 0, 10_000, 20);
    for (let offset = 2 * PART + MIB; offset < SIZE; offset += MIB) {
      await appendFile(file, bytes.subarray(offset, offset + MIB));
    }
    await uploads.finish();
    const result = await uploads.upload({ id: "o1", path: file });

    expect(result).toMatchObject({ bytes: SIZE, sha256: sha256(bytes) });
    expect(sha256(await readObject(client, BUCKET, "outgrown/o1"))).toBe(sha256(bytes));
    // The first upload, begun with 5 MiB parts, went no further than the limit's part 2; the
    // second holds the file in two parts of 12 MiB, and only it was completed.
    expect(count(sent, "CreateMultipartUploadCommand")).toBe(2);
    const uploadIds = [...new Set(uploadParts().map((request) => request.uploadId))];
    expect(uploadIds).toHaveLength(2);
    const partsOf = (uploadId: string | undefined) =>
      uploadParts()
        .filter((request) => request.uploadId === uploadId)
        .map((request) => [request.partNumber, request.contentLength]);
    expect(partsOf(uploadIds[0])).toEqual([[2, PART]]);
    expect(partsOf(uploadIds[1]).sort()).toEqual([
      [1, 12 * MIB],
      [2, SIZE - 12 * MIB],
    ]);
    const completions = sent.filter((request) => request.command === "CompleteMultipartUploadCommand");
    expect(completions.map((request) => request.uploadId)).toEqual([uploadIds[1]]);
    client.destroy();
  });
});
