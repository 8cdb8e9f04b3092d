import { describe, expect, it } from "vitest";
import { failureReason, retryDelayMs } from "./backchannel-logout-sender.ts";

describe("the wait before a back-channel logout's next attempt", () => {
  it("starts at the base and doubles after each failure, up to ten minutes", () => {
    expect([1, 2, 3, 4].map((attempts) => retryDelayMs(attempts, 2000))).toEqual([2000, 4000, 8000, 16000]);
    expect(retryDelayMs(40, 2000)).toBe(600_000);
  });
});

describe("the reason a failed attempt records", () => {
  it("names the error and its causes, as fetch hides the socket's error in its cause", () => {
    const refused = new TypeError("fetch failed", {
      cause: new Error("hostname resolves to a special-use IP address"),
    });
    expect(failureReason(refused)).toBe("fetch failed: hostname resolves to a special-use IP address");
    expect(failureReason("plain")).toBe("plain");
  });
});
