import { describe, expect, it } from "vitest";
import { ATTEMPT_STATES, attemptProgress, decideCancel, decideRetry, JOB_STATES } from "./lifecycle.ts";

describe("decideCancel", () => {
  it.each([
    ["QUEUED", "cancel-now"],
    ["RUNNING", "held-by-worker"],
    ["WAITING_FOR_STORAGE", "held-by-worker"],
    ["CANCEL_REQUESTED", "already-cancelling"],
    ["CANCELLED", "already-cancelling"],
    ["COMPLETED", "refuse"],
    ["FAILED", "refuse"],
  ] as const)("%s -> %s", (state, kind) => {
    expect(decideCancel(state).kind).toBe(kind);
  });

  it("has a decision for every job state", () => {
    for (const state of JOB_STATES) expect(decideCancel(state)).toBeDefined();
  });
});

describe("decideRetry", () => {
  it("retries only a FAILED job", () => {
    const retried = JOB_STATES.filter((state) => decideRetry(state).kind === "retry");
    expect(retried).toEqual(["FAILED"]);
  });
});

describe("attemptProgress", () => {
  it("is 0 before start, 100 when succeeded, live otherwise, null without a live value", () => {
    expect(attemptProgress("CREATED", 55)).toBe(0);
    expect(attemptProgress("SUCCEEDED", undefined)).toBe(100);
    expect(attemptProgress("RUNNING", 42.5)).toBe(42.5);
    expect(attemptProgress("RUNNING", undefined)).toBeNull();
    for (const state of ATTEMPT_STATES) expect(() => attemptProgress(state, undefined)).not.toThrow();
  });
});
