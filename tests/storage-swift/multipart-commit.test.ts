/**
 * Commit without a copy (S3_COMMIT=multipart) on Swift 2.30's s3api, driven by protocol-level
 * Workers that upload each output as the agent does under a multipart lease: at the
 * destination key, left incomplete, the part list in `completed`. Only the Manager completes
 * an upload, after the fencing check, and first aborts every other upload at that key.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CompleteMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import { type SwiftServer, startSwift } from "@tjm/devstack/swift";
import type { LeaseCommand, OutputResult } from "@tjm/protocol";
import { createS3Client, splitS3Uri } from "@tjm/storage";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MultipartUploader } from "../../worker-agent/src/storage/upload.ts";
import { TestManager } from "../harness/manager.ts";
import { listKeys } from "../harness/media-jobs.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { MIB, readObject, sha256, writeRandomFile } from "../storage/fixtures.ts";

let swift: SwiftServer;
let admin: S3Client;
let manager: TestManager;
const workers: ProtocolWorker[] = [];
let projectId: string;
let dir: string;
let seq = 0;

beforeAll(async () => {
  swift = await startSwift();
  admin = swift.client();
  await swift.createBucket("media-out");
  manager = await TestManager.start({
    storage: swift.settings,
    heartbeatIntervalMs: 200,
    lostAfterMs: 1_500,
    maxAttempts: 3,
    env: { S3_COMMIT: "multipart" },
  });
  ({ projectId } = await manager.createProject());
  dir = await mkdtemp(join(tmpdir(), "tjm-multipart-commit-"));
}, 120_000);

// Disabled at once, so no later test's job is leased to an earlier test's Worker.
afterEach(async () => {
  for (const worker of workers.splice(0)) {
    await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
    await worker.stop();
  }
});

afterAll(async () => {
  await manager?.close();
  await swift?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function startWorker(): Promise<ProtocolWorker> {
  const worker = await ProtocolWorker.start(manager);
  workers.push(worker);
  return worker;
}

/** Submits a job with one output; returns its first lease, accepted by `worker`. */
async function leasedJob(worker: ProtocolWorker) {
  const destinationUri = `s3://media-out/commits/${++seq}/720p.mp4`;
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

/** Uploads 6 MiB of fresh random bytes in two parts where the lease says, and leaves the upload incomplete. */
async function uploadIncomplete(lease: LeaseCommand, name = lease.attemptId) {
  const [upload] = lease.uploads;
  if (!upload) throw new Error("the lease names no upload");
  const file = join(dir, `${name}.bin`);
  const digest = await writeRandomFile(file, 6 * MIB);
  const client = createS3Client(swift.settings);
  const uploaded = await new MultipartUploader({
    client,
    file,
    uri: upload.uri,
    statePath: `${file}.state.json`,
    partSize: 5 * MIB,
    complete: false,
  })
    .upload()
    .finally(() => client.destroy());
  if (!uploaded.incomplete) throw new Error("the uploader completed the upload");
  const output: OutputResult = {
    id: upload.outputId,
    uri: upload.uri,
    bytes: uploaded.bytes,
    sha256: uploaded.sha256,
    durationMs: 1000,
    codecs: ["h264"],
    multipart: uploaded.incomplete,
  };
  return { output, digest };
}

function head(uri: string) {
  const { bucket, key } = splitS3Uri(uri);
  return admin.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).catch((error: unknown) => error);
}

/** The uploads in progress at exactly this key. */
async function uploadsAt(uri: string): Promise<string[]> {
  const { bucket, key } = splitS3Uri(uri);
  const answer = await admin.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
  return (answer.Uploads ?? []).flatMap((upload) =>
    upload.Key === key && upload.UploadId ? [upload.UploadId] : [],
  );
}

const sha256At = async (uri: string) => {
  const { bucket, key } = splitS3Uri(uri);
  return sha256(await readObject(admin, bucket, key));
};

const completed = (lease: LeaseCommand, output: OutputResult) => ({
  outputs: [output],
  logsUri: lease.logsUri,
});

describe("multipart commit on Swift s3api", () => {
  it("the lease names the destination; the Manager completes the upload there, no copy, no staging object", async () => {
    const worker = await startWorker();
    const { jobId, lease, destinationUri } = await leasedJob(worker);
    expect(lease).toMatchObject({ commit: "multipart", uploads: [{ uri: destinationUri }] });
    const { output, digest } = await uploadIncomplete(lease);
    // Uploaded but not completed: nothing is visible at the destination yet.
    expect(await head(destinationUri)).toMatchObject({ name: "NotFound" });
    const logBefore = await swift.proxyLog();

    await worker.report("completed", lease, completed(lease, output));
    const job = await manager.untilJob(jobId, "COMPLETED");
    expect(job.attempts[0]).toMatchObject({ state: "SUCCEEDED", failureCode: null });
    expect(job.outputs[0]).toMatchObject({ uri: destinationUri, bytes: 6 * MIB, sha256: digest });
    expect(await sha256At(destinationUri)).toBe(digest);
    expect(await uploadsAt(destinationUri)).toEqual([]);
    // No server-side copy: nothing carried x-amz-copy-source, and nothing was staged.
    const requests = (await swift.proxyLog()).slice(logBefore.length);
    expect(requests).not.toMatch(/ PUT \/media-out\/commits\/\d+\/720p\.mp4 HTTP/);
    expect(await listKeys({ client: () => admin }, "media-out", ".tjm-staging/")).toEqual([]);
  });

  it("a zombie's upload at the same key is aborted by the winner's commit and never becomes the object", async () => {
    const zombie = await startWorker();
    const { jobId, lease: lost, destinationUri } = await leasedJob(zombie);
    const zombieUpload = await uploadIncomplete(lost, `${lost.attemptId}-zombie`);
    // The zombie's host hangs: its attempt fails WORKER_LOST and another Worker runs the next one.
    zombie.stopHeartbeats();
    const rescuer = await startWorker();
    const winning = await rescuer.nextLease(jobId, 2);
    await rescuer.report("accepted", winning);
    expect(winning.uploads[0]?.uri).toBe(destinationUri);
    const winner = await uploadIncomplete(winning);
    expect(await uploadsAt(destinationUri)).toHaveLength(2);

    // The zombie reports first: stale, turned away by the fencing check.
    const counters = manager.manager.execution.reports.counters;
    const staleBefore = (counters.stale["not-current-attempt"] ?? 0) + (counters.stale["attempt-ended"] ?? 0);
    await zombie.report("completed", lost, completed(lost, zombieUpload.output));
    await waitFor(
      "the zombie's completed report counted as stale",
      async () =>
        (counters.stale["not-current-attempt"] ?? 0) + (counters.stale["attempt-ended"] ?? 0) > staleBefore,
      15_000,
      50,
    );
    expect(await head(destinationUri)).toMatchObject({ name: "NotFound" });

    await rescuer.report("completed", winning, completed(winning, winner.output));
    const job = await manager.untilJob(jobId, "COMPLETED");
    expect(
      job.attempts.map((attempt: { state: string; failureCode: string | null }) => attempt.failureCode),
    ).toEqual(["WORKER_LOST", null]);
    expect(await sha256At(destinationUri)).toBe(winner.digest);
    // The zombie's upload was aborted before the commit: its parts are gone from the store.
    expect(await uploadsAt(destinationUri)).toEqual([]);
    const zombieParts = await admin
      .send(
        new ListPartsCommand({
          ...bucketAndKey(destinationUri),
          UploadId: zombieUpload.output.multipart?.uploadId,
        }),
      )
      .catch((error: unknown) => error);
    expect(zombieParts).toMatchObject({ name: "NoSuchUpload" });
    // A zombie that goes on uploading afterwards gets a new upload nobody completes: the
    // destination keeps the winner's bytes.
    const late = await uploadIncomplete(lost, `${lost.attemptId}-late`);
    expect(await uploadsAt(destinationUri)).toEqual([late.output.multipart?.uploadId]);
    expect(await sha256At(destinationUri)).toBe(winner.digest);
  });

  it("a commit made before a crash lost its record is recognised by its ETag: no error, COMPLETED", async () => {
    const worker = await startWorker();
    const { jobId, lease, destinationUri } = await leasedJob(worker);
    const { output, digest } = await uploadIncomplete(lease);
    // What a Manager that died between CompleteMultipartUpload and its transaction's commit
    // leaves: the object complete, the attempt still waiting for its promotion.
    await admin.send(
      new CompleteMultipartUploadCommand({
        ...bucketAndKey(destinationUri),
        UploadId: output.multipart?.uploadId,
        MultipartUpload: {
          Parts: output.multipart?.parts.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })),
        },
      }),
    );
    const promoter = manager.manager.execution.promoter;
    const failuresBefore = promoter.counters.failures;

    await worker.report("completed", lease, completed(lease, output));
    const job = await manager.untilJob(jobId, "COMPLETED");
    expect(job.attempts[0]).toMatchObject({ state: "SUCCEEDED", failureCode: null });
    expect(promoter.counters.failures).toBe(failuresBefore);
    expect(await sha256At(destinationUri)).toBe(digest);
  });

  it("a part list the upload does not hold fails the job with OUTPUT_MISMATCH and completes nothing", async () => {
    const worker = await startWorker();
    const { jobId, lease, destinationUri } = await leasedJob(worker);
    const { output } = await uploadIncomplete(lease);
    const parts = output.multipart?.parts ?? [];
    const wrong = { ...parts[1], etag: `"${"0".repeat(32)}"` } as (typeof parts)[number];
    await worker.report(
      "completed",
      lease,
      completed(lease, {
        ...output,
        multipart: {
          uploadId: output.multipart?.uploadId ?? "",
          parts: [parts[0] as (typeof parts)[number], wrong],
        },
      }),
    );
    const job = await manager.untilJob(jobId, "FAILED");
    expect(job.attempts).toHaveLength(1);
    expect(job.attempts[0]).toMatchObject({ state: "FAILED", failureCode: "OUTPUT_MISMATCH" });
    expect(job.attempts[0].failureMessage).toContain(
      `part 2 was reported as ${wrong.bytes} bytes with ETag ${wrong.etag}`,
    );
    expect(await head(destinationUri)).toMatchObject({ name: "NotFound" });
    // Kept for whoever looks into it (the bucket's lifecycle rule aborts it later).
    expect(await uploadsAt(destinationUri)).toEqual([output.multipart?.uploadId]);
  });

  it("parts that do not add up to the reported size fail the job with OUTPUT_MISMATCH", async () => {
    const worker = await startWorker();
    const { jobId, lease, destinationUri } = await leasedJob(worker);
    const { output } = await uploadIncomplete(lease);
    await worker.report("completed", lease, completed(lease, { ...output, bytes: output.bytes + 1 }));
    const job = await manager.untilJob(jobId, "FAILED");
    expect(job.attempts[0]).toMatchObject({
      failureCode: "OUTPUT_MISMATCH",
      failureMessage: `${destinationUri}: the reported parts add up to ${output.bytes} bytes where the output has ${output.bytes + 1}`,
    });
    expect(await head(destinationUri)).toMatchObject({ name: "NotFound" });
  });
});

function bucketAndKey(uri: string): { Bucket: string; Key: string } {
  const { bucket, key } = splitS3Uri(uri);
  return { Bucket: bucket, Key: key };
}
