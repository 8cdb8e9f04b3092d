import { describe, expect, it } from "vitest";
import { ATTEMPT_STATES, attemptProgress } from "./states.ts";

describe("attemptProgress", () => {
  it("is 0 before start, 100 when succeeded, live otherwise, null without a live value", () => {
    expect(attemptProgress("CREATED", 55)).toBe(0);
    expect(attemptProgress("SUCCEEDED", undefined)).toBe(100);
    expect(attemptProgress("RUNNING", 42.5)).toBe(42.5);
    expect(attemptProgress("RUNNING", undefined)).toBeNull();
    for (const state of ATTEMPT_STATES) expect(() => attemptProgress(state, undefined)).not.toThrow();
  });
});
