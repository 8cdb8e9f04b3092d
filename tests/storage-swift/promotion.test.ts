/**
 * The Manager's promotion on Swift 2.30's s3api, driven by a protocol-level Worker that stages
 * each output as a multipart upload (as the agent does) and reports `completed`. Swift refuses
 * x-amz-copy-source-if-match for a multipart ETag (412), so every promotion here takes the
 * unpinned copy and is checked by size against the completed report.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeadObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { type SwiftServer, startSwift } from "@tjm/devstack/swift";
import type { LeaseCommand } from "@tjm/protocol";
import { createS3Client } from "@tjm/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MultipartUploader } from "../../worker-agent/src/storage/upload.ts";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { MIB, readObject, sha256, writeRandomFile } from "../storage/fixtures.ts";

let swift: SwiftServer;
let admin: S3Client;
let manager: TestManager;
let worker: ProtocolWorker;
let projectId: string;
let dir: string;
let seq = 0;

beforeAll(async () => {
  swift = await startSwift();
  admin = swift.client();
  await swift.createBucket("media-out");
  manager = await TestManager.start({ storage: swift.settings, heartbeatIntervalMs: 200, maxAttempts: 3 });
  ({ projectId } = await manager.createProject());
  worker = await ProtocolWorker.start(manager);
  dir = await mkdtemp(join(tmpdir(), "tjm-promotion-"));
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await manager?.close();
  await swift?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Submits a job with one output and returns its lease, accepted. */
async function leasedJob() {
  const destinationUri = `s3://media-out/movies/${++seq}/720p.mp4`;
  const plan = sampleSubmission(projectId).executionPlan;
  const jobId = await manager.submitJob(
    sampleSubmission(projectId, {
      executionPlan: { ...plan, outputs: [{ ...plan.outputs[0], destinationUri }] },
    }),
  );
  const lease = await worker.nextLease(jobId);
  await worker.report("accepted", lease);
  return { jobId, lease, destinationUri };
}

/** Uploads 6 MiB to the lease's staging key in two parts, as the agent would. */
async function stage(lease: LeaseCommand) {
  const [staging] = lease.uploads;
  if (!staging) throw new Error("the lease names no staging key");
  const file = join(dir, `${lease.attemptId}.bin`);
  const digest = await writeRandomFile(file, 6 * MIB);
  const client = createS3Client(swift.settings);
  const uploaded = await new MultipartUploader({
    client,
    file,
    uri: staging.uri,
    statePath: `${file}.state.json`,
    partSize: 5 * MIB,
  }).upload();
  client.destroy();
  expect(uploaded.etag).toMatch(/-2"$/);
  return { staging, digest, bytes: uploaded.bytes };
}

function head(uri: string) {
  const [bucket, ...key] = uri.slice("s3://".length).split("/");
  return admin
    .send(new HeadObjectCommand({ Bucket: bucket, Key: key.join("/") }))
    .catch((error: unknown) => error);
}

describe("promotion on Swift s3api", () => {
  it("a multipart-staged output reaches its destination with its size checked, and the job completes", async () => {
    const { jobId, lease, destinationUri } = await leasedJob();
    const { staging, digest, bytes } = await stage(lease);
    const logBefore = await swift.proxyLog();
    await worker.report("completed", lease, {
      outputs: [
        { id: staging.outputId, uri: staging.uri, bytes, sha256: digest, durationMs: 1000, codecs: ["h264"] },
      ],
      logsUri: lease.logsUri,
    });
    const job = await manager.untilJob(jobId, "COMPLETED");
    // What the Manager asked of the destination, from the proxy's access log (the S3 requests as
    // clients sent them): the pinned copy refused (412), the unpinned copy, the HEAD of its size.
    const destinationPath = `/${destinationUri.slice("s3://".length)}`;
    const asked = (await swift.proxyLog())
      .slice(logBefore.length)
      .split("\n")
      .flatMap((line) => {
        const request = / (HEAD|PUT|GET|DELETE) (\S+) HTTP\/1\.\d (\d{3}) /.exec(line);
        return request?.[2]?.split("%3F")[0] === destinationPath ? [`${request[1]} ${request[3]}`] : [];
      });
    expect(asked.sort()).toEqual(["HEAD 200", "PUT 200", "PUT 412"]);
    expect(job.attempts[0]).toMatchObject({ state: "SUCCEEDED", failureCode: null });
    expect(await head(destinationUri)).toMatchObject({ ContentLength: 6 * MIB });
    expect(sha256(await readObject(admin, "media-out", destinationUri.slice("s3://media-out/".length)))).toBe(
      digest,
    );
    expect(await head(staging.uri)).toMatchObject({ name: "NotFound" });
  });

  it("an output whose staged size differs from the completed report is not promoted: the job fails with OUTPUT_MISMATCH", async () => {
    const { jobId, lease, destinationUri } = await leasedJob();
    const { staging, digest, bytes } = await stage(lease);
    await worker.report("completed", lease, {
      outputs: [
        {
          id: staging.outputId,
          uri: staging.uri,
          bytes: bytes + 1,
          sha256: digest,
          durationMs: 1000,
          codecs: ["h264"],
        },
      ],
      logsUri: lease.logsUri,
    });
    const job = await manager.untilJob(jobId, "FAILED");
    expect(job.attempts).toHaveLength(1);
    expect(job.attempts[0]).toMatchObject({
      state: "FAILED",
      failureCode: "OUTPUT_MISMATCH",
      failureMessage: `${staging.uri} holds ${bytes} bytes where ${bytes + 1} were expected`,
    });
    expect(await head(destinationUri)).toMatchObject({ name: "NotFound" });
    // Kept for whoever looks into it.
    expect(await head(staging.uri)).toMatchObject({ ContentLength: bytes });
  });
});
