import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backoffDelayMs, DEFAULT_BACKOFF, retryDelayBefore } from "./backoff.ts";

const policy = { initialMs: 100, maxMs: 1000 };

describe("backoffDelayMs", () => {
  it("doubles from the initial step up to the cap, the upper half randomised", () => {
    const lowest = [0, 1, 2, 3, 4, 5].map((attempt) => backoffDelayMs(attempt, policy, () => 0));
    const highest = [0, 1, 2, 3, 4, 5].map((attempt) => backoffDelayMs(attempt, policy, () => 1));
    expect(lowest).toEqual([50, 100, 200, 400, 500, 500]);
    expect(highest).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it("stays within [step/2, step] for any attempt and random draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5, max: 10_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (attempt, r) => {
          const delay = backoffDelayMs(attempt, DEFAULT_BACKOFF, () => r);
          expect(delay).toBeGreaterThanOrEqual(DEFAULT_BACKOFF.initialMs / 2);
          expect(delay).toBeLessThanOrEqual(DEFAULT_BACKOFF.maxMs);
        },
      ),
    );
  });
});

describe("retryDelayBefore", () => {
  it("gives the backoff delay while the deadline is far", () => {
    expect(retryDelayBefore(10_000, 0, 2, policy, () => 1)).toBe(400);
  });

  it("shortens the last delay so the last try starts by the deadline", () => {
    expect(retryDelayBefore(10_000, 9_950, 5, policy, () => 1)).toBe(50);
  });

  it("gives up once the deadline has passed", () => {
    expect(retryDelayBefore(10_000, 10_000, 0, policy, () => 1)).toBeUndefined();
    expect(retryDelayBefore(10_000, 12_000, 0, policy, () => 1)).toBeUndefined();
  });
});
