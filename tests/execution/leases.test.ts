/**
 * The Manager's side of execution, driven by protocol-level Workers: leases, fencing,
 * dispatch deadlines, lost Workers, cancel, drain and bad reports.
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import { PROTOCOL_VERSION, subjects } from "@tjm/protocol";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";

let manager: TestManager;
let projectId: string;
const workers: ProtocolWorker[] = [];

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
  // Each test starts from Workers of its own: the others stop taking leases.
  for (const worker of workers.splice(0)) {
    await manager.request(`/api/v1/operations/workers/${worker.workerId}/disable`, { method: "POST" });
    await worker.stop();
  }
});
afterAll(async () => {
  await manager?.close();
});

async function startWorker(options: Parameters<typeof ProtocolWorker.start>[1] = {}) {
  const worker = await ProtocolWorker.start(manager, options);
  workers.push(worker);
  return worker;
}

const submit = (overrides: Record<string, unknown> = {}) =>
  manager.submitJob(sampleSubmission(projectId, overrides));

/** How this file polls a job: every 25 ms for up to 20 s. */
const POLL = { timeoutMs: 20_000, pollMs: 25 };

describe("leases", () => {
  it("a queued job is leased to an eligible Worker with a new fencing token; accepted makes it RUNNING", async () => {
    const worker = await startWorker();
    const jobId = await submit();
    const lease = await worker.nextLease(jobId);
    expect(lease).toMatchObject({
      jobId,
      attemptNumber: 1,
      // Attempt 1 was created with token 1; dispatching it took the next.
      fencingToken: "2",
      workDirectory: null,
      storage: { endpoint: "http://127.0.0.1:1", forcePathStyle: true, checksums: "WHEN_REQUIRED" },
      commit: "copy",
      uploads: [{ outputId: "720p", uri: `s3://media-out/.tjm-staging/${jobId}/${lease.attemptId}/720p` }],
      logsUri: `s3://media-out/.tjm-logs/${jobId}/attempt-1.log`,
    });
    expect(Date.parse(lease.dispatchDeadline) - Date.now()).toBeLessThanOrEqual(1000);
    expect((await manager.job(jobId)).state).toBe("QUEUED");

    await worker.report("accepted", lease);
    const running = await manager.untilJob(jobId, "RUNNING", POLL);
    expect(running.startedAt).not.toBeNull();
    expect(running.currentAttempt.state).toBe("RUNNING");
  });

  it("a job submitted while a Worker has a free slot is leased in its submit's own transaction", async () => {
    const worker = await startWorker();
    // A pass has seen the Worker's free slots once this first job is leased.
    await worker.nextLease(await submit());
    // No heartbeat wakes a pass meanwhile: the scheduler is idle when the next submit comes.
    worker.stopHeartbeats();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const jobId = await submit();
    await worker.nextLease(jobId);
    // One transaction: its now() is both the job's creation and the lease's dispatch.
    const [row] = await manager.sql<{ oneTransaction: boolean }[]>`
      select a.dispatched_at = j.created_at as one_transaction
      from jobs j join attempts a on a.id = j.current_attempt_id where j.id = ${jobId}`;
    expect(row?.oneTransaction).toBe(true);
  });

  it("no eligible Worker (missing encoder, other pool): the job waits QUEUED", async () => {
    const worker = await startWorker({
      overrides: {
        probe: {
          ffmpegVersion: "5.1",
          capabilities: ["aac"],
          hardwareEncoders: [],
          certification: { status: "READY", reasons: [] },
          capacity: 4,
        },
      },
    });
    const h264 = await submit();
    const nvidia = await submit({ requirements: { requiredCapabilities: ["h264_nvenc"] } });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(worker.leases()).toEqual([]);
    expect((await manager.job(h264)).state).toBe("QUEUED");
    expect((await manager.job(nvidia)).workerPool).toBe("nvidia");
    // Cleanup: these must not reach the next test's Worker.
    for (const jobId of [h264, nvidia])
      await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
  });

  it("a lease not accepted in time fails DISPATCH_TIMEOUT and the next attempt follows, up to MAX_ATTEMPTS", async () => {
    const worker = await startWorker();
    const jobId = await submit();
    const failed = await manager.untilJob(jobId, "FAILED", { ...POLL, what: "FAILED after 3 timeouts" });
    expect(
      failed.attempts.map((a: { state: string; failureCode: string }) => [a.state, a.failureCode]),
    ).toEqual([
      ["FAILED", "DISPATCH_TIMEOUT"],
      ["FAILED", "DISPATCH_TIMEOUT"],
      ["FAILED", "DISPATCH_TIMEOUT"],
    ]);
    const leases = worker.leases().filter((lease) => lease.jobId === jobId);
    expect(leases.map((lease) => lease.attemptNumber)).toEqual([1, 2, 3]);
    // Strictly increasing per job.
    expect(leases.map((lease) => Number(lease.fencingToken))).toEqual([2, 4, 6]);
    // Each timed-out lease is withdrawn from the Worker.
    for (const lease of leases) await worker.nextCommand("cancel", lease.attemptId);
  });

  it("a report with an old fencing token after the next attempt started is acked and changes nothing", async () => {
    const worker = await startWorker();
    const jobId = await submit();
    const first = await worker.nextLease(jobId);
    const second = await worker.nextLease(jobId, 2);
    await worker.report("accepted", second);
    await manager.untilJob(jobId, "RUNNING", POLL);
    const before = await manager.job(jobId);
    const staleBefore = manager.manager.execution.reports.counters.stale;
    const counted = (staleBefore["attempt-ended"] ?? 0) + (staleBefore["not-current-attempt"] ?? 0);

    await worker.report("failed", first, { failureCode: "ENCODE_FAILED", failureMessage: "late zombie" });
    await worker.report("accepted", { attemptId: second.attemptId, fencingToken: first.fencingToken });
    await waitFor("both stale reports counted", async () => {
      const stale = manager.manager.execution.reports.counters.stale;
      return (
        (stale["not-current-attempt"] ?? 0) + (stale["attempt-ended"] ?? 0) + (stale["fencing-token"] ?? 0) >=
        counted + 2
      );
    });
    expect(await manager.job(jobId)).toEqual(before);
  });

  it("a Worker that goes OFFLINE loses its attempts (WORKER_LOST); another Worker takes the next one", async () => {
    const lost = await startWorker();
    const jobId = await submit();
    const lease = await lost.nextLease(jobId);
    await lost.report("accepted", lease);
    await manager.untilJob(jobId, "RUNNING", POLL);
    lost.stopHeartbeats();
    const rescuer = await startWorker();
    await rescuer.nextLease(jobId, 2);
    const detail = await manager.job(jobId);
    expect(detail.attempts[0]).toMatchObject({ state: "FAILED", failureCode: "WORKER_LOST" });
    expect(
      (await (await manager.request(`/api/v1/operations/workers/${lost.workerId}`)).json()).connectivity,
    ).toBe("OFFLINE");
  });
});

describe("disable", () => {
  it("fails what the Worker holds (WORKER_DISABLED) so the job moves on at once", async () => {
    const disabled = await startWorker();
    const jobId = await submit();
    const lease = await disabled.nextLease(jobId);
    await disabled.report("accepted", lease);
    await manager.untilJob(jobId, "RUNNING", POLL);
    await manager.request(`/api/v1/operations/workers/${disabled.workerId}/disable`, { method: "POST" });
    const detail = await manager.untilJob(jobId, (j) => j.attempts.length === 2, {
      ...POLL,
      what: "the next attempt",
    });
    expect(detail.state).toBe("QUEUED");
    expect(detail.attempts[0]).toMatchObject({ state: "FAILED", failureCode: "WORKER_DISABLED" });
    await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
  });
});

describe("cancel", () => {
  it("of a RUNNING job: CANCEL_REQUESTED, the Worker is told, and its confirmation makes it CANCELLED", async () => {
    const worker = await startWorker();
    const jobId = await submit();
    const lease = await worker.nextLease(jobId);
    await worker.report("accepted", lease);
    await manager.untilJob(jobId, "RUNNING", POLL);
    const response = await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    expect(response.status).toBe(202);
    expect((await response.json()).state).toBe("CANCEL_REQUESTED");
    const cancel = await worker.nextCommand("cancel", lease.attemptId);
    expect(cancel.fencingToken).toBe(lease.fencingToken);
    await worker.report("cancelled", lease);
    const cancelled = await manager.untilJob(jobId, "CANCELLED", POLL);
    expect(cancelled.currentAttempt.state).toBe("CANCELLED");
  });

  it("of a dispatched-but-not-accepted job: CANCELLED at once, and the Worker drops the lease", async () => {
    const worker = await startWorker();
    const jobId = await submit();
    const lease = await worker.nextLease(jobId);
    const response = await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    expect((await response.json()).state).toBe("CANCELLED");
    await worker.nextCommand("cancel", lease.attemptId);
    // A late acceptance changes nothing.
    await worker.report("accepted", lease);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await manager.job(jobId)).state).toBe("CANCELLED");
  });

  it("a lease to the slot a cancel just freed reaches the Worker after that cancel", async () => {
    const worker = await startWorker({ overrides: { capacityCap: 1 } });
    const first = await submit();
    const lease = await worker.nextLease(first);
    // Queued behind the Worker's one slot.
    const second = await submit();
    const response = await manager.request(`/api/v1/operations/jobs/${first}/cancel`, { method: "POST" });
    expect((await response.json()).state).toBe("CANCELLED");
    await worker.nextLease(second);
    // In this order the Worker frees its slot before the next lease asks for it; the other way
    // round it would refuse the lease (no free slot).
    expect(
      worker.commands.map((command) =>
        command.type === "lease"
          ? `lease ${command.jobId}`
          : `${command.type} ${"attemptId" in command ? command.attemptId : ""}`,
      ),
    ).toEqual([`lease ${first}`, `cancel ${lease.attemptId}`, `lease ${second}`]);
    // Nothing left for the next test's Workers.
    await manager.request(`/api/v1/operations/jobs/${second}/cancel`, { method: "POST" });
  });
});

describe("drain", () => {
  it("a draining Worker takes no new lease, finishes what it holds, then is DRAINED", async () => {
    const worker = await startWorker();
    const jobId = await submit();
    const lease = await worker.nextLease(jobId);
    await worker.report("accepted", lease);
    await manager.request(`/api/v1/operations/workers/${worker.workerId}/drain`, { method: "POST" });
    await worker.nextCommand("drain");
    const waiting = await submit();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(worker.leases().map((l) => l.jobId)).toEqual([jobId]);
    const shown = await (await manager.request(`/api/v1/operations/workers/${worker.workerId}`)).json();
    expect(shown.conditions.map((c: { type: string }) => c.type)).toEqual(["DRAINING"]);

    await worker.report("failed", lease, {
      failureCode: "ENCODE_FAILED",
      failureMessage: "ffmpeg exited with 1",
    });
    await waitFor("DRAINED", async () => {
      const w = await (await manager.request(`/api/v1/operations/workers/${worker.workerId}`)).json();
      return w.conditions.some((c: { type: string }) => c.type === "DRAINED");
    });
    await manager.request(`/api/v1/operations/jobs/${waiting}/cancel`, { method: "POST" });
  });
});

describe("bad reports are dropped, counted, and change nothing", () => {
  it.each<
    [
      string,
      (worker: ProtocolWorker) => Promise<void>,
      (c: typeof manager.manager.execution.reports.counters) => number,
    ]
  >([
    [
      "not JSON",
      (w) =>
        w.publishRaw(
          subjects.workerReports(manager.subjectPrefix, w.workerId),
          new TextEncoder().encode("{"),
        ),
      (c) => c.invalid,
    ],
    [
      "the wrong schema",
      (w) =>
        w.publishRaw(
          subjects.workerReports(manager.subjectPrefix, w.workerId),
          new TextEncoder().encode(JSON.stringify({ type: "accepted", protocolVersion: PROTOCOL_VERSION })),
        ),
      (c) => c.invalid,
    ],
    [
      "an unknown attempt",
      (w) => w.report("accepted", { attemptId: crypto.randomUUID(), fencingToken: "2" }),
      (c) => c.stale["unknown-attempt"] ?? 0,
    ],
  ])("%s", async (_, send, counter) => {
    const worker = await startWorker();
    const before = counter(manager.manager.execution.reports.counters);
    await send(worker);
    await waitFor(
      "the report counted",
      async () => counter(manager.manager.execution.reports.counters) > before,
    );
  });

  it("a report from an old instance or naming another Worker", async () => {
    const worker = await startWorker();
    const other = await startWorker();
    const jobId = await submit();
    const lease = [worker, other].map((w) => w.leases().find((l) => l.jobId === jobId));
    await waitFor("the lease", async () =>
      [worker, other].some((w) => w.leases().some((l) => l.jobId === jobId)),
    );
    const holder = worker.leases().some((l) => l.jobId === jobId) ? worker : other;
    const bystander = holder === worker ? other : worker;
    const held = holder.leases().find((l) => l.jobId === jobId);
    if (!held) throw new Error(`no lease ${lease}`);
    const counters = manager.manager.execution.reports.counters;
    const before = { ...counters.stale };
    await holder.report("accepted", held, {}, crypto.randomUUID());
    await bystander.report("accepted", held);
    await waitFor(
      "both counted",
      async () =>
        (counters.stale["old-instance"] ?? 0) > (before["old-instance"] ?? 0) &&
        (counters.stale["other-worker"] ?? 0) > (before["other-worker"] ?? 0),
    );
    expect((await manager.job(jobId)).state).toBe("QUEUED");
    await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
  });
});
