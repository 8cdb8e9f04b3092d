import { describe, expect, it } from "vitest";
import { MIN_REFRESH_DELAY_MS, refreshDelayMs, refreshRetryDelayMs } from "./credential-schedule.ts";

const second = 1000;

describe("refreshDelayMs", () => {
  it("refreshes at half the lifetime left when the JWT arrived", () => {
    expect(refreshDelayMs(3600 * second, 0)).toBe(1800 * second);
    expect(refreshDelayMs(1_000_020_000, 1_000_000_000)).toBe(10 * second);
  });

  it("never refreshes sooner than the minimum, even for a JWT our clock thinks expired", () => {
    expect(refreshDelayMs(1500, 0)).toBe(MIN_REFRESH_DELAY_MS);
    expect(refreshDelayMs(0, 60 * second)).toBe(MIN_REFRESH_DELAY_MS);
  });
});

describe("refreshRetryDelayMs", () => {
  const expiresAt = 600 * second;

  it("backs off from one second to thirty", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((failures) =>
      refreshRetryDelayMs(failures, expiresAt, 0, () => 1),
    );
    expect(delays).toEqual([1, 2, 4, 8, 16, 30, 30].map((s) => s * second));
  });

  it("tries once more just before the expiry rather than after it", () => {
    const now = expiresAt - 10 * second;
    expect(refreshRetryDelayMs(6, expiresAt, now, () => 1)).toBe(9 * second);
  });

  it("keeps backing off once the JWT has expired", () => {
    expect(refreshRetryDelayMs(6, expiresAt, expiresAt + second, () => 1)).toBe(30 * second);
  });
});
