import { describe, expect, it } from "vitest";
import { afterAttemptFailed } from "./failures.ts";
import type { JobState } from "./states.ts";

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
