/**
 * When to refresh the NATS user JWT, without I/O. The server disconnects a client whose JWT
 * expires, so the agent refreshes at half its lifetime: a failed refresh then still leaves
 * the other half for retries before the connection is lost.
 */
import { type BackoffPolicy, backoffDelayMs } from "../platform/backoff.ts";

/** Never refresh sooner than this after a refresh, whatever the clocks say. */
export const MIN_REFRESH_DELAY_MS = 1000;

/** Retries of a failed refresh: quick at first, then every 30 s. */
export const REFRESH_RETRY_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 };

/**
 * Delay from `receivedAt` (local clock, when the JWT arrived) until the refresh. The lifetime
 * is counted from receipt rather than from the JWT's issue time, so a skew between the
 * Manager's clock and ours shifts both ends alike and only the expiry matters.
 */
export function refreshDelayMs(expiresAt: number, receivedAt: number): number {
  return Math.max(MIN_REFRESH_DELAY_MS, Math.floor((expiresAt - receivedAt) / 2));
}

/**
 * Delay before retrying a refresh that failed for a transient reason: backoff, but never
 * past the expiry while there is still time before it, so the last try comes in time.
 */
export function refreshRetryDelayMs(
  failures: number,
  expiresAt: number,
  now: number,
  random: () => number,
): number {
  const delay = backoffDelayMs(failures - 1, REFRESH_RETRY_BACKOFF, random);
  const untilExpiry = expiresAt - now - MIN_REFRESH_DELAY_MS;
  if (untilExpiry > MIN_REFRESH_DELAY_MS) return Math.min(delay, untilExpiry);
  return delay;
}
