/**
 * The requeue rule and the job's times, whichever path moved the job: an operator, a Worker's
 * report, a sweep or a Worker's change of life all go through one transition applier, so a
 * job's queued_at, started_at and completed_at follow one rule (docs/lifecycle.md, "Next
 * attempts and the queue").
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";

let manager: TestManager;
let projectId: string;
const workers: ProtocolWorker[] = [];
const jobs: string[] = [];

beforeAll(async () => {
  manager = await TestManager.start({
    heartbeatIntervalMs: 200,
    lostAfterMs: 1000,
    dispatchTimeoutMs: 1000,
    maxAttempts: 3,
  });
  ({ projectId } = await manager.createProject());
});
afterEach(async () => {
  // Each test starts from Workers and jobs of its own: nothing left here reaches the next one.
  for (const worker of workers.splice(0)) {
    await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
    await worker.stop();
  }
  for (const jobId of jobs.splice(0)) {
    await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
  }
});
afterAll(async () => {
  await manager?.close();
});

/** A Worker with `slots` slots (each test's Workers are its own). */
async function startWorker(slots = 4) {
  const worker = await ProtocolWorker.start(manager, {
    overrides: {
      probe: {
        ffmpegVersion: "5.1.9",
        capabilities: ["libx264", "aac"],
        hardwareEncoders: [],
        certification: { status: "READY", reasons: [] },
        capacity: slots,
      },
    },
  });
  workers.push(worker);
  return worker;
}

async function submit(): Promise<string> {
  const jobId = await manager.submitJob(sampleSubmission(projectId));
  jobs.push(jobId);
  return jobId;
}

const POLL = { timeoutMs: 20_000, pollMs: 25 };

interface Times {
  queuedAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

async function timesOf(jobId: string): Promise<Times> {
  const [row] = await manager.sql<Times[]>`
    select queued_at, started_at, completed_at from jobs where id = ${jobId}`;
  if (!row) throw new Error(`no job ${jobId}`);
  return row;
}

/** When the first attempt's Worker had it: what started_at must say. */
async function firstAcceptedAt(jobId: string): Promise<Date | null> {
  const [row] = await manager.sql<{ acceptedAt: Date | null }[]>`
    select accepted_at from attempts where job_id = ${jobId} and attempt_number = 1`;
  return row?.acceptedAt ?? null;
}

/** The jobs this Worker was leased, in order, as `jobId/attemptNumber`. */
const leaseOrder = (worker: ProtocolWorker) =>
  worker.leases().map((lease) => `${lease.jobId}/${lease.attemptNumber}`);

/** A job whose first attempt a Worker (returned) accepted: RUNNING, started. */
async function runningJob(worker?: ProtocolWorker) {
  const holder = worker ?? (await startWorker());
  const jobId = await submit();
  const lease = await holder.nextLease(jobId);
  await holder.report("accepted", lease);
  await manager.untilJob(jobId, "RUNNING", POLL);
  return { jobId, lease, worker: holder, before: await timesOf(jobId) };
}

describe("a job whose attempt failed for a Worker's reason keeps its place in the queue", () => {
  it("after DISPATCH_TIMEOUT its next attempt is leased before a job queued after it", async () => {
    const worker = await startWorker(1);
    const first = await submit();
    const firstLease = await worker.nextLease(first);
    const second = await submit();
    const before = await timesOf(first);
    // The lease is never accepted: the sweeper fails it and the one slot frees up.
    const retried = await worker.nextLease(first, 2);
    await worker.report("accepted", retried);
    await manager.untilJob(first, "RUNNING", POLL);
    expect(leaseOrder(worker)).toEqual([`${first}/1`, `${first}/2`]);
    expect((await manager.job(second)).state).toBe("QUEUED");
    const after = await timesOf(first);
    expect(after.queuedAt).toEqual(before.queuedAt);
    expect(after.queuedAt.getTime()).toBeLessThan((await timesOf(second)).queuedAt.getTime());
    expect((await manager.job(first)).attempts[0]).toMatchObject({
      id: firstLease.attemptId,
      failureCode: "DISPATCH_TIMEOUT",
    });
  });

  it("after WORKER_LOST its next attempt goes to the next Worker before a job queued after it", async () => {
    const lost = await startWorker(1);
    const { jobId, before } = await runningJob(lost);
    const waiting = await submit();
    lost.stopHeartbeats();
    await manager.untilJob(jobId, (job) => job.attempts.length === 2, { ...POLL, what: "the next attempt" });
    const rescuer = await startWorker(1);
    await rescuer.report("accepted", await rescuer.nextLease(jobId, 2));
    expect(leaseOrder(rescuer)).toEqual([`${jobId}/2`]);
    const detail = await manager.job(jobId);
    expect(detail.attempts[0]).toMatchObject({ state: "FAILED", failureCode: "WORKER_LOST" });
    expect(await timesOf(jobId)).toEqual(before);
    expect((await manager.job(waiting)).state).toBe("QUEUED");
  });
});

describe("a FAILED job an operator retries enters the queue again at the back", () => {
  it("behind a job submitted while it was FAILED, and its run starts afresh", async () => {
    const { jobId, lease, worker } = await runningJob();
    await worker.report("failed", lease, {
      failureCode: "ENCODER_FAILED",
      failureMessage: "ffmpeg exited 1",
    });
    await manager.untilJob(jobId, "FAILED", POLL);
    const failed = await timesOf(jobId);
    expect(failed.startedAt).not.toBeNull();
    // No Worker takes leases while the two jobs queue.
    await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
    const waiting = await submit();
    const retry = await manager.request(`/api/v1/operations/jobs/${jobId}/retry`, { method: "POST" });
    expect(retry.status).toBe(202);
    const retried = await timesOf(jobId);
    expect(retried.queuedAt.getTime()).toBeGreaterThan((await timesOf(waiting)).queuedAt.getTime());
    expect(retried).toMatchObject({ startedAt: null, completedAt: null });
    const next = await startWorker(1);
    await next.report("accepted", await next.nextLease(waiting));
    expect(leaseOrder(next)).toEqual([`${waiting}/1`]);
  });
});

describe("started_at and completed_at are set alike whichever path moved the job", () => {
  it.each(["accepted", "started", "encoded"] as const)(
    "RUNNING by a `%s` report: started_at is when the Worker had it, completed_at null",
    async (type) => {
      const worker = await startWorker();
      const jobId = await submit();
      const lease = await worker.nextLease(jobId);
      const before = await timesOf(jobId);
      await worker.report(type, lease);
      await manager.untilJob(jobId, "RUNNING", POLL);
      const after = await timesOf(jobId);
      expect(after.startedAt).not.toBeNull();
      expect(after.startedAt).toEqual(await firstAcceptedAt(jobId));
      expect(after).toMatchObject({ queuedAt: before.queuedAt, completedAt: null });
    },
  );

  const nextAttemptPaths: [string, (job: Awaited<ReturnType<typeof runningJob>>) => Promise<void>][] = [
    ["a sweep (WORKER_LOST)", async ({ worker }) => worker.stopHeartbeats()],
    [
      "an operator disabling the Worker (WORKER_DISABLED)",
      async ({ worker }) => {
        await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
      },
    ],
    ["the Worker's report (ABANDONED)", async ({ worker, lease }) => worker.report("cancelled", lease)],
  ];
  it.each(nextAttemptPaths)(
    "a next attempt by %s keeps queued_at and started_at; completed_at stays null",
    async (_path, fail) => {
      const job = await runningJob();
      await fail(job);
      const requeued = await manager.untilJob(job.jobId, (detail) => detail.attempts.length === 2, {
        ...POLL,
        what: "the next attempt",
      });
      expect(requeued.state).toBe("QUEUED");
      expect(job.before.startedAt).toEqual(await firstAcceptedAt(job.jobId));
      expect(await timesOf(job.jobId)).toEqual(job.before);
    },
  );

  it("FAILED by a report or CANCELLED by an operator or a Worker: started_at kept, completed_at null", async () => {
    const worker = await startWorker();
    const failed = await runningJob(worker);
    await failed.worker.report("failed", failed.lease, {
      failureCode: "ENCODER_FAILED",
      failureMessage: "ffmpeg exited 1",
    });
    await manager.untilJob(failed.jobId, "FAILED", POLL);
    expect(await timesOf(failed.jobId)).toEqual(failed.before);

    const confirmed = await runningJob(worker);
    await manager.request(`/api/v1/operations/jobs/${confirmed.jobId}/cancel`, { method: "POST" });
    await confirmed.worker.report("cancelled", confirmed.lease);
    await manager.untilJob(confirmed.jobId, "CANCELLED", POLL);
    expect(await timesOf(confirmed.jobId)).toEqual(confirmed.before);

    const queued = await submit();
    const before = await timesOf(queued);
    await manager.request(`/api/v1/operations/jobs/${queued}/cancel`, { method: "POST" });
    expect(await timesOf(queued)).toEqual({ ...before, startedAt: null, completedAt: null });
  });
});
