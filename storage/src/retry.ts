/**
 * Our retry loop around one storage request (the SDK's is off, see client.ts). Only
 * recoverable failures are retried, with exponential backoff and jitter, until the attempts or
 * the time budget run out; then StorageUnavailableError, which the Worker turns into "upload
 * paused" and resumes later instead of holding a job slot through a long outage, and the
 * Manager's promoter into a later pass.
 */
import { setTimeout as delay } from "node:timers/promises";
import { classifyStorageError, StorageUnavailableError } from "./errors.ts";

/** The one kind of line storage logs; the Manager's and the Worker's loggers both write it. */
export interface StorageLogger {
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: StorageLogger = { warn: () => {} };

export interface RetryPolicy {
  /** Attempts per request, the first one included. */
  maxAttempts: number;
  /**
   * No retry starts later than this after the request's first attempt. A request already
   * running may add up to the client's socket timeout on top.
   */
  budgetMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

/**
 * 5 attempts, delays of about 1-2, 2-4, 4-8 and 8-16 s, all within 30 s: rides out a store
 * restart or a burst of SlowDown, and gives up soon enough in a real outage that the Worker
 * can report the upload as paused.
 */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 5,
  budgetMs: 30_000,
  initialDelayMs: 2_000,
  maxDelayMs: 16_000,
};

/** Time and randomness, injectable so unit tests run the schedule without waiting. */
export interface RetryClock {
  now(): number;
  random(): number;
  /** Resolves after `ms`, or rejects once `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: RetryClock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : undefined),
};

/** The options every storage operation takes. */
export interface RetryOptions {
  retry?: Partial<RetryPolicy>;
  clock?: Partial<RetryClock>;
  /** Cancels the operation: the request in flight is aborted and no retry starts. */
  signal?: AbortSignal;
  logger?: StorageLogger;
}

export interface RetryContext {
  operation: string;
  uri: string;
  policy: RetryPolicy;
  clock: RetryClock;
  logger: StorageLogger;
  /** Stops retrying (a sleep in progress ends at once) and rejects with its reason. */
  signal?: AbortSignal | undefined;
}

export function retryContext(operation: string, uri: string, options: RetryOptions): RetryContext {
  return {
    operation,
    uri,
    policy: { ...DEFAULT_RETRY, ...options.retry },
    clock: { ...systemClock, ...options.clock },
    logger: options.logger ?? silentLogger,
    signal: options.signal,
  };
}

/**
 * The delay before the next attempt after `failedAttempts` failures, `elapsedMs` after the
 * first attempt started; undefined when the policy says give up. The last delay is
 * shortened so that retry still starts within the budget.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  failedAttempts: number,
  elapsedMs: number,
  random: () => number,
): number | undefined {
  const remainingMs = policy.budgetMs - elapsedMs;
  if (failedAttempts >= policy.maxAttempts || remainingMs <= 0) return undefined;
  // "Equal jitter": the upper half of each doubling step is random, so Workers that lost the
  // store together do not retry in lockstep, and no delay collapses to zero.
  const step = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(failedAttempts - 1, 30));
  return Math.min(Math.round(step / 2 + (random() * step) / 2), remainingMs);
}

/**
 * Runs `request` until it succeeds, fails with a non-recoverable error (rethrown as it is,
 * for the caller to map), or the policy gives up on recoverable ones (StorageUnavailableError).
 */
export async function withRetry<T>(
  request: (attempt: number) => Promise<T>,
  context: RetryContext,
): Promise<T> {
  const { policy, clock, signal } = context;
  const started = clock.now();
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await request(attempt);
    } catch (error) {
      signal?.throwIfAborted();
      if (classifyStorageError(error) !== "recoverable") throw error;
      const delayMs = retryDelayMs(policy, attempt, clock.now() - started, clock.random);
      if (delayMs === undefined) {
        throw new StorageUnavailableError(context.operation, context.uri, attempt, error);
      }
      context.logger.warn("storage request failed; retrying", {
        operation: context.operation,
        uri: context.uri,
        attempt,
        delayMs,
        error,
      });
      try {
        await clock.sleep(delayMs, signal);
      } catch (sleepError) {
        signal?.throwIfAborted();
        throw sleepError;
      }
    }
  }
}
