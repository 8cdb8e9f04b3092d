/**
 * What an operator reads about a job beyond its state: which Worker ran each attempt and when
 * it started and ended, the outputs at their destinations with sizes, duration, resolution and
 * codecs, the manifest as written, the tail of an attempt's log (read from the store with a
 * ranged GET), and the projects a job can be submitted to. A protocol-level Worker
 * (tests/harness/protocol-worker.ts) finishes the leases with real objects in s3rver, so the
 * Manager promotes them and writes the manifest as it does for an agent.
 */
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import type { LeaseCommand } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { sha256 } from "../harness/media-jobs.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";

let s3: S3Server;
let manager: TestManager;
let worker: ProtocolWorker;
let projectId: string;

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  manager = await TestManager.start({ storage: s3.settings });
  ({ projectId } = await manager.createProject("detail-org", "detail-project"));
  worker = await ProtocolWorker.start(manager);
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await manager?.close();
  await s3?.stop();
});

async function put(uri: string, body: Uint8Array | string): Promise<void> {
  const [bucket, ...key] = uri.slice("s3://".length).split("/");
  await s3.client().send(new PutObjectCommand({ Bucket: bucket, Key: key.join("/"), Body: body }));
}

/** Submits a job and waits until the protocol Worker holds its lease, accepted. */
async function runningJob(
  plan = sampleSubmission(projectId),
): Promise<{ jobId: string; lease: LeaseCommand }> {
  const jobId = await manager.submitJob(plan);
  const lease = await worker.nextLease(jobId);
  await worker.report("accepted", lease);
  await manager.untilJob(jobId, "RUNNING");
  return { jobId, lease };
}

const logOf = (jobId: string, attemptId: string) =>
  manager.request(`/api/v1/operations/jobs/${jobId}/attempts/${attemptId}/log`);

describe("a completed job's detail", () => {
  let jobId: string;
  let lease: LeaseCommand;
  let outputBytes: Uint8Array;

  beforeAll(async () => {
    ({ jobId, lease } = await runningJob());
    const before = await manager.job(jobId);
    expect(before.attempts[0]).toMatchObject({ workerId: worker.workerId, endedAt: null });
    expect(before.attempts[0].startedAt).toEqual(expect.any(String));
    expect(before.outputs).toEqual([]);
    expect(before.manifest).toBeNull();
    expect(before.completedAt).toBeNull();

    outputBytes = new TextEncoder().encode("the 720p output");
    const staged = lease.uploads[0] as { outputId: string; uri: string };
    await put(staged.uri, outputBytes);
    // A log of 100,000 bytes in numbered lines: longer than the 64 KiB tail.
    const lines = Array.from(
      { length: 5000 },
      (_, i) => `line ${String(i).padStart(5, "0")} of ffmpeg's log`,
    );
    await put(lease.logsUri, `${lines.join("\n")}\n`);
    await worker.report("completed", lease, {
      outputs: [
        {
          id: staged.outputId,
          uri: staged.uri,
          bytes: outputBytes.byteLength,
          sha256: await sha256(outputBytes),
          durationMs: 5_000,
          codecs: ["h264", "aac"],
          widthPx: 1280,
          heightPx: 720,
        },
      ],
      logsUri: lease.logsUri,
    });
    await manager.untilJob(jobId, "COMPLETED");
  });

  it("names the Worker of each attempt, when it started and ended, and keeps completedAt", async () => {
    const job = await manager.job(jobId);
    const [attempt] = job.attempts;
    expect(attempt).toMatchObject({ workerId: worker.workerId, state: "SUCCEEDED", progress: 100 });
    expect(Date.parse(attempt.endedAt)).toBeGreaterThanOrEqual(Date.parse(attempt.startedAt));
    expect(job.completedAt).toEqual(expect.any(String));
    expect(job.currentAttempt.progress).toBe(attempt.progress);
  });

  it("lists the outputs at their destinations with size, duration, resolution and codecs", async () => {
    const job = await manager.job(jobId);
    expect(job.outputs).toEqual([
      {
        id: "720p",
        uri: "s3://media-out/movies/42/720p.mp4",
        bytes: outputBytes.byteLength,
        sha256: await sha256(outputBytes),
        durationMs: 5_000,
        codecs: ["h264", "aac"],
        widthPx: 1280,
        heightPx: 720,
      },
    ]);
    expect(job.manifest).toBeNull();
  });

  it("answers the last 64 KiB of the log, from a line boundary", async () => {
    const response = await logOf(jobId, lease.attemptId);
    expect(response.status).toBe(200);
    const log = await response.json();
    expect(log).toMatchObject({ jobId, attemptId: lease.attemptId, logsUri: lease.logsUri, truncated: true });
    expect(log.totalBytes).toBe(5000 * "line 00000 of ffmpeg's log\n".length);
    expect(log.text.length).toBeLessThanOrEqual(64 * 1024);
    expect(log.text.length).toBeGreaterThan(64 * 1024 - 100);
    expect(log.text).toMatch(/^line \d{5} of ffmpeg's log\n/);
    expect(log.text.endsWith("line 04999 of ffmpeg's log\n")).toBe(true);
  });
});

describe("a job with a manifest", () => {
  it("shows the manifest as the Manager wrote it", async () => {
    const plan = sampleSubmission(projectId, {
      executionPlan: {
        ...sampleSubmission(projectId).executionPlan,
        outputs: [
          {
            ...sampleSubmission(projectId).executionPlan.outputs[0],
            destinationUri: "s3://media-out/manifested/720p.mp4",
          },
        ],
        manifestUri: "s3://media-out/manifested/manifest.json",
      },
    });
    const { jobId, lease } = await runningJob(plan);
    const staged = lease.uploads[0] as { outputId: string; uri: string };
    const body = new TextEncoder().encode("tiny");
    await put(staged.uri, body);
    await put(lease.logsUri, "a short log\n");
    await worker.report("completed", lease, {
      outputs: [
        {
          id: staged.outputId,
          uri: staged.uri,
          bytes: 4,
          sha256: await sha256(body),
          durationMs: 900,
          codecs: ["aac"],
        },
      ],
      logsUri: lease.logsUri,
    });
    const job = await manager.untilJob(jobId, "COMPLETED");
    expect(job.outputs).toEqual([
      expect.objectContaining({ uri: "s3://media-out/manifested/720p.mp4", widthPx: null, heightPx: null }),
    ]);
    expect(job.manifest).toMatchObject({
      jobId,
      attemptId: lease.attemptId,
      attemptNumber: 1,
      outputs: [expect.objectContaining({ uri: "s3://media-out/manifested/720p.mp4", bytes: 4 })],
      logsUri: lease.logsUri,
    });

    const log = await (await logOf(jobId, lease.attemptId)).json();
    expect(log).toMatchObject({ truncated: false, totalBytes: 12, text: "a short log\n" });
  });
});

describe("the log route's 404s", () => {
  it("a job or attempt that does not exist", async () => {
    const { jobId, lease } = await runningJob();
    for (const [job, attempt] of [
      [crypto.randomUUID(), lease.attemptId],
      [jobId, crypto.randomUUID()],
    ] as const) {
      const response = await logOf(job, attempt);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({
        statusCode: 404,
        error: "Not Found",
        message: `Job ${job} has no attempt ${attempt}`,
      });
    }
  });

  it("a running attempt, whose log the Worker has not uploaded yet", async () => {
    const { jobId, lease } = await runningJob();
    const response = await logOf(jobId, lease.attemptId);
    expect(response.status).toBe(404);
    expect((await response.json()).message).toBe(
      `Attempt ${lease.attemptId} has no log yet: the Worker uploads it when the attempt ends`,
    );
  });

  it("a log the attempt names but the store no longer holds", async () => {
    const { jobId, lease } = await runningJob();
    await worker.report("failed", lease, {
      failureCode: "ENCODER_FAILED",
      failureMessage: "ffmpeg exited with code 1",
      logsUri: lease.logsUri,
    });
    const failed = await manager.untilJob(jobId, "FAILED");
    expect(failed.attempts[0]).toMatchObject({ failureCode: "ENCODER_FAILED", logsUri: lease.logsUri });
    expect(failed.attempts[0].endedAt).toEqual(expect.any(String));
    expect(failed.completedAt).toBeNull();
    const response = await logOf(jobId, lease.attemptId);
    expect(response.status).toBe(404);
    expect((await response.json()).message).toBe(
      `The log of attempt ${lease.attemptId} is not in storage: ${lease.logsUri}`,
    );
  });

  it("an attempt that never started: no start time, and no log", async () => {
    const jobId = await manager.submitJob(
      sampleSubmission(projectId, { requirements: { requiredCapabilities: ["h264_nvenc"] } }),
    );
    const cancelled = await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(202);
    const job = await manager.job(jobId);
    expect(job.state).toBe("CANCELLED");
    expect(job.attempts[0]).toMatchObject({ workerId: null, startedAt: null, state: "CANCELLED" });
    expect(job.attempts[0].endedAt).toEqual(expect.any(String));
    const log = await logOf(jobId, job.attempts[0].id);
    expect(log.status).toBe(404);
    expect((await log.json()).message).toBe(
      `Attempt ${job.attempts[0].id} ended without a log (it never ran, or its Worker could not upload one)`,
    );
  });

  it("needs an operator token", async () => {
    const path = `/api/v1/operations/jobs/${crypto.randomUUID()}/attempts/${crypto.randomUUID()}/log`;
    expect((await fetch(`${manager.baseUrl}${path}`)).status).toBe(401);
  });
});

describe("the projects route", () => {
  it("lists every project with its organization, by organization then project name", async () => {
    const other = await manager.createProject("another-org", "a-project");
    const response = await manager.request("/api/v1/operations/projects?limit=10");
    expect(response.status).toBe(200);
    const page = await response.json();
    expect(page).toMatchObject({ total: 2, limit: 10, offset: 0 });
    expect(page.items).toEqual([
      {
        id: other.projectId,
        name: "a-project",
        organizationId: other.organizationId,
        organizationName: "another-org",
        createdAt: expect.any(String),
      },
      expect.objectContaining({ id: projectId, name: "detail-project", organizationName: "detail-org" }),
    ]);
    const second = await (await manager.request("/api/v1/operations/projects?limit=1&offset=1")).json();
    expect(second.items.map((project: { id: string }) => project.id)).toEqual([projectId]);
    expect(second.total).toBe(2);
  });

  it("needs the operations audience", async () => {
    expect((await fetch(`${manager.baseUrl}/api/v1/operations/projects`)).status).toBe(401);
    const wrongAudience = await manager.request("/api/v1/operations/projects", {
      headers: { authorization: `Bearer ${await manager.issuer.token({ audience: "account-portal" })}` },
    });
    expect(wrongAudience.status).toBe(403);
  });
});
