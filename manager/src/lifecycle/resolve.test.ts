import type { Report } from "@tjm/protocol";
import { describe, expect, it } from "vitest";
import { type Resolution, resolve } from "./resolve.ts";
import { type AttemptState, JOB_STATES, type JobState } from "./states.ts";
import { type Facts, reportTrigger, type Trigger } from "./transitions.ts";

const FACTS: Facts = {
  now: new Date("2026-11-21T11:00:00Z"),
  jobDeadline: new Date("2026-11-24T10:00:00Z"),
  completionAccepted: false,
  attemptNumber: 1,
  maxAttempts: 3,
  keptOutputs: {
    pauseExpiresAt: new Date("2026-11-22T10:00:00Z"),
    worker: { exists: true, disabled: false },
  },
};

const outcome = (resolution: Resolution) =>
  resolution.kind === "transition" ? resolution.transition.name : `refused: ${resolution.reason}`;

describe("an operator's cancel", () => {
  it.each<[JobState, AttemptState, string]>([
    ["QUEUED", "CREATED", "cancel-now"],
    ["QUEUED", "DISPATCHED", "cancel-now"],
    ["RUNNING", "RUNNING", "cancel-held-by-worker"],
    ["WAITING_FOR_STORAGE", "WAITING_FOR_STORAGE", "cancel-held-by-worker"],
    ["CANCEL_REQUESTED", "RUNNING", "already-cancelling"],
    ["CANCELLED", "CANCELLED", "already-cancelling"],
    ["COMPLETED", "SUCCEEDED", "refused: Job is COMPLETED and can no longer be cancelled"],
    ["FAILED", "FAILED", "refused: Job is FAILED and can no longer be cancelled"],
  ])("of a %s job (attempt %s): %s", (job, attempt, expected) => {
    expect(outcome(resolve("cancel-requested", { job, attempt }))).toBe(expected);
  });

  it("is sent to the Worker, now or held, and not again while cancelling", () => {
    const command = (job: JobState, attempt: AttemptState) => {
      const resolution = resolve("cancel-requested", { job, attempt });
      return resolution.kind === "transition" ? resolution.transition.effects.command : undefined;
    };
    expect(command("QUEUED", "DISPATCHED")).toBe("cancel");
    expect(command("RUNNING", "UPLOADING")).toBe("cancel");
    expect(command("CANCEL_REQUESTED", "UPLOADING")).toBeUndefined();
  });
});

describe("an operator's retry", () => {
  it("retries only a FAILED job, with a next attempt", () => {
    const retried = JOB_STATES.filter(
      (job) => resolve("retry", { job, attempt: "FAILED" }).kind === "transition",
    );
    expect(retried).toEqual(["FAILED"]);
    expect(outcome(resolve("retry", { job: "COMPLETED", attempt: "SUCCEEDED" }))).toBe(
      "refused: Only a FAILED job can be retried; this job is COMPLETED",
    );
    expect(resolve("retry", { job: "FAILED", attempt: "FAILED" })).toMatchObject({
      transition: { to: { job: "QUEUED" }, effects: { nextAttempt: true } },
    });
  });
});

describe("an operator's resume-uploads", () => {
  const waiting = { job: "WAITING_FOR_STORAGE", attempt: "WAITING_FOR_STORAGE" } as const;

  it.each<[string, { job: JobState; attempt: AttemptState }, Partial<Facts>, string]>([
    ["a waiting job with its Worker", waiting, {}, "resume-uploads-requested"],
    [
      "a running job",
      { job: "RUNNING", attempt: "UPLOADING" },
      {},
      "refused: Only a job WAITING_FOR_STORAGE can resume uploads; this job is RUNNING",
    ],
    [
      "expired retention",
      waiting,
      { now: new Date("2026-11-22T10:00:00Z") },
      "refused: The kept outputs' retention has expired; retry the job to encode again",
    ],
    [
      "a passed deadline",
      waiting,
      { jobDeadline: new Date("2026-11-21T10:59:59Z") },
      "refused: The job's deadline has passed",
    ],
    [
      "a disabled Worker",
      waiting,
      {
        keptOutputs: {
          pauseExpiresAt: new Date("2026-11-22T10:00:00Z"),
          worker: { exists: true, disabled: true },
        },
      },
      "refused: The Worker that holds the encoded outputs is gone or disabled; retry the job to encode again",
    ],
  ])("for %s: %s", (_, states, facts, expected) => {
    expect(outcome(resolve("resume-uploads", states, { ...FACTS, ...facts }))).toBe(expected);
  });

  it("asks the Worker and leaves the job waiting for its upload-resumed report", () => {
    expect(resolve("resume-uploads", waiting, FACTS)).toMatchObject({
      transition: { to: {}, effects: { command: "resume-uploads" } },
    });
  });
});

describe("a Worker's report", () => {
  const report = (type: Report["type"]) => reportTrigger({ type });

  it.each<[Report["type"], AttemptState, JobState, string]>([
    ["accepted", "DISPATCHED", "QUEUED", "lease-accepted"],
    ["accepted", "RUNNING", "RUNNING", "refused"],
    ["rejected", "DISPATCHED", "QUEUED", "lease-rejected.next-attempt"],
    ["rejected", "RUNNING", "RUNNING", "refused"],
    ["started", "DISPATCHED", "QUEUED", "started-before-accepted"],
    ["started", "RUNNING", "RUNNING", "refused"],
    ["encoded", "RUNNING", "RUNNING", "encoded"],
    ["encoded", "UPLOADING", "RUNNING", "refused"],
    ["upload-paused", "UPLOADING", "RUNNING", "uploads-paused"],
    ["upload-paused", "WAITING_FOR_STORAGE", "WAITING_FOR_STORAGE", "refused"],
    ["upload-resumed", "WAITING_FOR_STORAGE", "WAITING_FOR_STORAGE", "uploads-resumed"],
    ["upload-resumed", "UPLOADING", "RUNNING", "refused"],
    ["completed", "UPLOADING", "RUNNING", "completion-accepted"],
    ["completed", "UPLOADING", "CANCEL_REQUESTED", "completed-after-cancel"],
    ["failed", "RUNNING", "RUNNING", "attempt-failed.job-failed"],
    ["cancelled", "RUNNING", "CANCEL_REQUESTED", "cancel-confirmed"],
    ["cancelled", "RUNNING", "RUNNING", "abandoned.next-attempt"],
  ])("%s while the attempt is %s and the job %s: %s", (type, attempt, job, expected) => {
    const resolution = resolve(
      report(type),
      { job, attempt },
      { ...FACTS, reportedFailureCode: "ENCODE_FAILED" },
    );
    expect(resolution.kind === "transition" ? resolution.transition.name : "refused").toBe(expected);
  });

  it("names why it changes nothing", () => {
    expect(outcome(resolve("report:accepted", { job: "RUNNING", attempt: "RUNNING" }))).toBe(
      "refused: report:accepted changes nothing for a RUNNING job whose attempt is RUNNING",
    );
  });
});

describe("what follows a failure", () => {
  const dispatched = { job: "QUEUED", attempt: "DISPATCHED" } as const;

  it.each<[string, Trigger, { job: JobState; attempt: AttemptState }, Partial<Facts>, string]>([
    [
      "a dispatch timeout with attempts left",
      "dispatch-timeout",
      dispatched,
      {},
      "dispatch-timeout.next-attempt",
    ],
    [
      "a dispatch timeout of the last attempt",
      "dispatch-timeout",
      dispatched,
      { attemptNumber: 3 },
      "dispatch-timeout.job-failed",
    ],
    [
      "a dispatch timeout after the job's deadline",
      "dispatch-timeout",
      dispatched,
      { jobDeadline: new Date("2026-11-21T10:00:00Z") },
      "dispatch-timeout.job-failed",
    ],
    [
      "a dispatch timeout while a cancel is pending",
      "dispatch-timeout",
      { job: "CANCEL_REQUESTED", attempt: "DISPATCHED" },
      { attemptNumber: 3 },
      "dispatch-timeout.job-cancelled",
    ],
    [
      "a retryable code the Worker reported",
      "report:failed",
      { job: "RUNNING", attempt: "RUNNING" },
      { reportedFailureCode: "WORKER_LOST" },
      "attempt-failed.next-attempt",
    ],
    [
      "a failure of the job itself the Worker reported",
      "report:failed",
      { job: "RUNNING", attempt: "RUNNING" },
      { reportedFailureCode: "INPUT_NOT_FOUND" },
      "attempt-failed.job-failed",
    ],
    [
      "a lost Worker whose completion was accepted",
      "worker-offline",
      { job: "RUNNING", attempt: "UPLOADING" },
      { completionAccepted: true },
      "refused: the attempt's completion was accepted: the Manager finishes it",
    ],
    [
      "a promotion without an accepted completion",
      "promotion-done",
      { job: "RUNNING", attempt: "UPLOADING" },
      {},
      "refused: the attempt's completion was not accepted",
    ],
  ])("%s: %s", (_, trigger, states, facts, expected) => {
    expect(outcome(resolve(trigger, states, { ...FACTS, ...facts }))).toBe(expected);
  });

  it("needs the facts its guards look at", () => {
    expect(() => resolve("dispatch-timeout", dispatched)).toThrow(
      "dispatch-timeout.next-attempt needs facts",
    );
    expect(() =>
      resolve("dispatch-timeout", dispatched, { ...FACTS, attemptNumber: undefined, maxAttempts: undefined }),
    ).toThrow("needs the attempt's number and MAX_ATTEMPTS");
    expect(() => resolve("report:failed", { job: "RUNNING", attempt: "RUNNING" }, FACTS)).toThrow(
      "needs the failure code the Worker reported",
    );
  });
});
