/**
 * Storage going down while a job's encode streams its input, end to end: a real Manager, a
 * real agent (Bun) with its retry budget shortened to half a second, real ffmpeg, s3rver behind
 * the request log that holds the input's read and then takes the store down. The outage lasts
 * several budgets: the job stays RUNNING with its attempt waiting for its input (in the API
 * and on the event stream), resume-uploads is refused (there is nothing to resume), and once
 * the store is back the same attempt completes: one attempt, one ffmpeg run. A cancel ends a
 * waiting attempt at once, the store still down.
 */
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { putClip, startTestAgent, tinyPlan } from "../harness/media-jobs.ts";
import { type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";

const RETRY_BUDGET_MS = 500;
/** Several budgets: an attempt that failed its read after one budget would have failed by far. */
const OUTAGE_MS = 4 * RETRY_BUDGET_MS;

let s3: S3Server;
let store: S3RequestLog;
let manager: TestManager;
let agent: AgentProcess;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
let projectId: string;

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  store = await startS3RequestLog(s3.port);
  manager = await TestManager.start({
    storage: { ...s3.settings, endpoint: store.endpoint },
    heartbeatIntervalMs: 300,
  });
  ({ projectId } = await manager.createProject());
  for (const key of ["kept.mp4", "cancelled.mp4"])
    await putClip(s3, { bucket: "media-in", key }, 2, "160x120");
  scratch = await agentDirs();
  agent = await startTestAgent(manager, scratch.root, "input-outage", {
    WORKER_CAPACITY: "2",
    WORKER_UPLOAD_RETRY_BUDGET_MS: String(RETRY_BUDGET_MS),
    WORKER_UPLOAD_RETRY_ATTEMPTS: "2",
  });
}, 60_000);

afterAll(async () => {
  store?.intercept(undefined);
  await killAgents();
  await manager?.close();
  await store?.close();
  await s3?.stop();
  await scratch?.cleanup();
});

type Detail = Awaited<ReturnType<TestManager["job"]>>;
const currentAttempt = (job: Detail) =>
  job.attempts.find((attempt: Detail["attempts"][number]) => attempt.id === job.currentAttemptId);

describe("storage down while the input is streamed", () => {
  it("holds the encode, keeps the job RUNNING, and the same attempt completes once the store is back", async () => {
    const job = await manager.submitJob({
      projectId,
      executionPlan: {
        ...tinyPlan("/media-out/kept").executionPlan,
        input: { uri: "s3://media-in/kept.mp4" },
      },
    });
    // Every read of the input once ffmpeg runs is held until the store goes down, and dies with it.
    let reached = false;
    let goDown: () => void = () => {};
    const wentDown = new Promise<void>((resolve) => {
      goDown = resolve;
    });
    store.intercept(async (request) => {
      if (request.path !== "/media-in/kept.mp4") return;
      if (!agent.logs.some((line) => line.msg === "encoding" && line.jobId === job)) return;
      reached = true;
      await wentDown;
      throw new Error("the store went down");
    });
    await waitFor("the encode reading its input", async () => reached, 30_000);
    const downAt = Date.now();
    const closed = store.down();
    goDown();
    await closed;
    try {
      const waiting = await manager.untilJob(
        job,
        (detail) => currentAttempt(detail)?.waitingForInput != null,
        {
          what: "the attempt waiting for its input",
        },
      );
      expect(waiting.state).toBe("RUNNING");
      expect(currentAttempt(waiting)).toMatchObject({
        state: "RUNNING",
        waitingForInput: {
          since: expect.any(String),
          // One try or two: the read held until the outage may have spent the budget by itself.
          lastError: expect.stringMatching(
            /^stream s3:\/\/media-in\/kept\.mp4: storage unavailable after [12] attempt\(s\)/,
          ),
        },
      });
      const resume = await manager.request(`/api/v1/operations/jobs/${job}/resume-uploads`, {
        method: "POST",
      });
      expect(resume.status).toBe(409);
      expect(((await resume.json()) as { message: string }).message).toMatch(
        /waited for storage to read its input since .*: it has no uploads to resume/,
      );

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, downAt + OUTAGE_MS - Date.now())));
      expect((await manager.job(job)).state).toBe("RUNNING");
    } finally {
      // Up again whatever failed: the next test's job needs the agent's slot and the store.
      store.intercept(undefined);
      await store.up();
    }

    const done = await manager.untilJob(job, "COMPLETED", { timeoutMs: 30_000 });
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0]).toMatchObject({
      state: "SUCCEEDED",
      encodingRecoveryCount: 0,
      uploadRecoveryCount: 0,
      waitingForInput: null,
    });
    // One ffmpeg run: the encode went on, it did not start again.
    expect(agent.logs.filter((line) => line.msg === "encoding" && line.jobId === job)).toHaveLength(1);

    // What the event stream announced: the wait, then its end, the job RUNNING throughout.
    const events = await manager.sql<{ payload: Record<string, unknown> }[]>`
      select payload from outbox
      where kind = 'job.updated' and payload->>'jobId' = ${job} and payload ? 'waitingForInput'
      order by id`;
    expect(events.map((event) => event.payload)).toEqual([
      expect.objectContaining({
        from: "RUNNING",
        to: "RUNNING",
        waitingForInput: { since: expect.any(String), lastError: expect.any(String) },
      }),
      expect.objectContaining({ from: "RUNNING", to: "RUNNING", waitingForInput: null }),
    ]);
  }, 60_000);

  it("ends a waiting attempt at once when its job is cancelled, with the store still down", async () => {
    await store.down();
    try {
      const job = await manager.submitJob({
        projectId,
        executionPlan: {
          ...tinyPlan("/media-out/cancelled").executionPlan,
          input: { uri: "s3://media-in/cancelled.mp4" },
        },
      });
      await manager.untilJob(job, (detail) => currentAttempt(detail)?.waitingForInput != null, {
        what: "the attempt waiting for its input",
      });
      const cancelAt = Date.now();
      const cancel = await manager.request(`/api/v1/operations/jobs/${job}/cancel`, { method: "POST" });
      expect(cancel.status).toBe(202);
      const cancelled = await manager.untilJob(job, "CANCELLED", { timeoutMs: 10_000 });
      // The Worker let go at once instead of waiting for the store.
      expect(Date.now() - cancelAt).toBeLessThan(5_000);
      expect(cancelled.attempts).toHaveLength(1);
      expect(currentAttempt(cancelled)).toMatchObject({ state: "CANCELLED", waitingForInput: null });
    } finally {
      await store.up();
    }
  }, 60_000);
});
