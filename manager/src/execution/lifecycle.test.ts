import { examples, type Report } from "@tjm/protocol";
import { describe, expect, it } from "vitest";
import type { AttemptState, JobState } from "../jobs/lifecycle.ts";
import {
  afterAttemptFailed,
  checkFence,
  reportEffect,
  resumeUploadsRefusal,
  uploadPauseExpiry,
} from "./lifecycle.ts";

const held = {
  state: "RUNNING" as AttemptState,
  fencingToken: "2",
  workerId: examples.reports.accepted.workerId,
  instanceId: examples.reports.accepted.instanceId,
  isCurrent: true,
};
const report = examples.reports.accepted;

describe("checkFence", () => {
  it("accepts the current attempt at its token from its Worker's instance", () => {
    expect(checkFence(report, held)).toBeUndefined();
  });

  it.each<[string, Parameters<typeof checkFence>[1], ReturnType<typeof checkFence>]>([
    ["an unknown attempt", undefined, "unknown-attempt"],
    ["an attempt that is no longer current", { ...held, isCurrent: false }, "not-current-attempt"],
    ["an older fencing token", { ...held, fencingToken: "3" }, "fencing-token"],
    [
      "another Worker's attempt",
      { ...held, workerId: "00000000-0000-4000-8000-000000000000" },
      "other-worker",
    ],
    ["an old instance", { ...held, instanceId: "00000000-0000-4000-8000-000000000000" }, "old-instance"],
    ["an ended attempt", { ...held, state: "FAILED" }, "attempt-ended"],
  ])("refuses %s", (_, attempt, reason) => {
    expect(checkFence(report, attempt)).toBe(reason);
  });
});

describe("afterAttemptFailed", () => {
  const base = {
    failureCode: "WORKER_LOST",
    jobState: "RUNNING" as JobState,
    attemptNumber: 1,
    maxAttempts: 3,
    deadlinePassed: false,
  };
  it.each<[string, Partial<typeof base>, string]>([
    ["a lost Worker with attempts left", {}, "next-attempt"],
    ["a dispatch timeout with attempts left", { failureCode: "DISPATCH_TIMEOUT" }, "next-attempt"],
    ["the last attempt", { attemptNumber: 3 }, "job-failed"],
    ["a deadline that passed", { deadlinePassed: true }, "job-failed"],
    ["a failure of the job itself", { failureCode: "INPUT_NOT_FOUND" }, "job-failed"],
    ["a pending cancel", { jobState: "CANCEL_REQUESTED" }, "job-cancelled"],
  ])("%s", (_, overrides, expected) => {
    expect(afterAttemptFailed({ ...base, ...overrides })).toBe(expected);
  });
});

describe("reportEffect", () => {
  const r = (type: Report["type"]) =>
    (examples.reports as Record<string, Report>)[
      { "upload-paused": "uploadPaused", "upload-resumed": "uploadResumed" }[type as string] ?? type
    ] as Report;

  it.each<[Report["type"], AttemptState, JobState, string]>([
    ["accepted", "DISPATCHED", "QUEUED", "accept"],
    ["accepted", "RUNNING", "RUNNING", "ignore"],
    ["rejected", "DISPATCHED", "QUEUED", "fail"],
    ["rejected", "RUNNING", "RUNNING", "ignore"],
    ["encoded", "RUNNING", "RUNNING", "start-uploading"],
    ["encoded", "UPLOADING", "RUNNING", "ignore"],
    ["upload-paused", "UPLOADING", "RUNNING", "pause-uploads"],
    ["upload-resumed", "WAITING_FOR_STORAGE", "WAITING_FOR_STORAGE", "resume-uploads"],
    ["upload-resumed", "UPLOADING", "RUNNING", "ignore"],
    ["completed", "UPLOADING", "RUNNING", "accept-completion"],
    ["completed", "UPLOADING", "CANCEL_REQUESTED", "cancelled"],
    ["failed", "RUNNING", "RUNNING", "fail"],
    ["cancelled", "RUNNING", "CANCEL_REQUESTED", "cancelled"],
    ["cancelled", "RUNNING", "RUNNING", "fail"],
  ])("%s while the attempt is %s and the job %s: %s", (type, attemptState, jobState, kind) => {
    expect(reportEffect(r(type), attemptState, jobState).kind).toBe(kind);
  });
});

describe("uploads waiting for storage", () => {
  it("are kept 24 h from the first pause, never past the job deadline", () => {
    const pausedAt = new Date("2026-11-21T10:00:00Z");
    expect(uploadPauseExpiry(pausedAt, new Date("2026-11-25T00:00:00Z"))).toEqual(
      new Date("2026-11-22T10:00:00Z"),
    );
    expect(uploadPauseExpiry(pausedAt, new Date("2026-11-21T12:00:00Z"))).toEqual(
      new Date("2026-11-21T12:00:00Z"),
    );
  });

  const eligible = {
    jobState: "WAITING_FOR_STORAGE" as JobState,
    attemptState: "WAITING_FOR_STORAGE" as AttemptState,
    now: new Date("2026-11-21T11:00:00Z"),
    pauseExpiresAt: new Date("2026-11-22T10:00:00Z"),
    jobDeadline: new Date("2026-11-24T10:00:00Z"),
    worker: { exists: true, disabled: false },
  };

  it.each<[string, Partial<typeof eligible>, RegExp | undefined]>([
    ["a waiting job with its Worker", {}, undefined],
    ["a running job", { jobState: "RUNNING", attemptState: "UPLOADING" }, /Only a job WAITING_FOR_STORAGE/],
    ["expired retention", { now: new Date("2026-11-22T10:00:00Z") }, /retention has expired/],
    ["a passed deadline", { jobDeadline: new Date("2026-11-21T10:59:59Z") }, /deadline has passed/],
    ["a disabled Worker", { worker: { exists: true, disabled: true } }, /gone or disabled/],
  ])("resume-uploads for %s", (_, overrides, refusal) => {
    const answer = resumeUploadsRefusal({ ...eligible, ...overrides });
    if (refusal) expect(answer).toMatch(refusal);
    else expect(answer).toBeUndefined();
  });
});
