import { NoSuchBucket } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { StorageUnavailableError } from "./errors.ts";
import {
  DEFAULT_RETRY,
  type RetryClock,
  type RetryContext,
  retryDelayMs,
  silentLogger,
  withRetry,
} from "./retry.ts";

const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });

/** A clock that only moves when the code under test sleeps (plus `requestMs` per request). */
function fakeClock(random = 0.5) {
  let now = 0;
  const sleeps: number[] = [];
  const clock: RetryClock = {
    now: () => now,
    random: () => random,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      sleeps.push(ms);
      now += ms;
    },
  };
  return { clock, sleeps, advance: (ms: number) => (now += ms), elapsed: () => now };
}

function context(clock: RetryClock, overrides: Partial<RetryContext> = {}): RetryContext {
  return {
    operation: "upload part 3",
    uri: "s3://bucket/key",
    policy: DEFAULT_RETRY,
    clock,
    logger: silentLogger,
    ...overrides,
  };
}

describe("retryDelayMs", () => {
  it("doubles from 2 s to 16 s, the upper half of each step randomised, then gives up after 5 attempts", () => {
    const schedule = (random: number) =>
      [1, 2, 3, 4, 5].map((failures) => retryDelayMs(DEFAULT_RETRY, failures, 0, () => random));
    expect(schedule(0)).toEqual([1000, 2000, 4000, 8000, undefined]);
    expect(schedule(1)).toEqual([2000, 4000, 8000, 16000, undefined]);
  });

  it("shortens the last delay to the budget and gives up once the budget is spent", () => {
    expect(retryDelayMs(DEFAULT_RETRY, 4, 29_000, () => 1)).toBe(1000);
    expect(retryDelayMs(DEFAULT_RETRY, 1, 30_000, () => 0)).toBeUndefined();
  });

  it("keeps the whole default schedule within the 30 s budget", () => {
    const worst = [1, 2, 3, 4].reduce(
      (sum, failures) => sum + (retryDelayMs(DEFAULT_RETRY, failures, sum, () => 1) ?? 0),
      0,
    );
    expect(worst).toBeLessThanOrEqual(DEFAULT_RETRY.budgetMs);
  });
});

describe("withRetry", () => {
  it("retries recoverable failures and returns the first success", async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    const result = await withRetry(async () => {
      calls++;
      if (calls < 3) throw refused();
      return "stored";
    }, context(clock));
    expect(result).toBe("stored");
    expect(calls).toBe(3);
    expect(sleeps).toEqual([1500, 3000]);
  });

  it("rethrows a non-recoverable error at once, without sleeping", async () => {
    const { clock, sleeps } = fakeClock();
    const missing = new NoSuchBucket({ message: "no bucket", $metadata: { httpStatusCode: 404 } });
    let calls = 0;
    await expect(
      withRetry(async () => {
        calls++;
        throw missing;
      }, context(clock)),
    ).rejects.toBe(missing);
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it("gives up with StorageUnavailableError after the attempts, within the budget", async () => {
    const { clock, elapsed } = fakeClock(1);
    let calls = 0;
    const error = await withRetry(async () => {
      calls++;
      throw refused();
    }, context(clock)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).attempts).toBe(5);
    expect((error as Error).message).toBe(
      "upload part 3 s3://bucket/key: storage unavailable after 5 attempt(s): Error: connect ECONNREFUSED 127.0.0.1:9",
    );
    expect((error as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
    expect(calls).toBe(5);
    expect(elapsed()).toBeLessThanOrEqual(DEFAULT_RETRY.budgetMs);
  });

  it("gives up early when slow requests use up the budget", async () => {
    const { clock, advance } = fakeClock(1);
    let calls = 0;
    const error = await withRetry(async () => {
      calls++;
      advance(12_000); // each attempt hangs until a timeout
      throw Object.assign(new Error("socket timed out"), { name: "TimeoutError" });
    }, context(clock)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect(calls).toBe(3);
  });

  it("stops when its signal aborts, with the signal's reason", async () => {
    const controller = new AbortController();
    const { clock } = fakeClock();
    let calls = 0;
    const reason = new Error("another part failed");
    await expect(
      withRetry(
        async () => {
          calls++;
          controller.abort(reason);
          throw refused();
        },
        context(clock, { signal: controller.signal }),
      ),
    ).rejects.toBe(reason);
    expect(calls).toBe(1);
  });
});
