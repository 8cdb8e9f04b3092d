/**
 * When to try again, without I/O: exponential backoff with jitter, bounded by a deadline.
 * Jitter keeps a fleet of Workers that lost the Manager at the same moment from retrying in
 * lockstep when it comes back.
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

/** Start-up and credential retries: quick at first, then every few seconds. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 5000 };

/**
 * Delay before retry number `attempt` (0 for the first retry): the exponential step, of
 * which the upper half is randomised ("equal jitter"), so a delay never collapses to zero.
 */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const exponent = Math.min(Math.max(0, attempt), 30);
  const step = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * The delay before the next attempt, shortened so the last attempt still starts before the
 * deadline; undefined once the deadline has passed, when the caller gives up.
 */
export function retryDelayBefore(
  deadline: number,
  now: number,
  attempt: number,
  policy: BackoffPolicy,
  random: () => number,
): number | undefined {
  const remaining = deadline - now;
  if (remaining <= 0) return undefined;
  return Math.min(backoffDelayMs(attempt, policy, random), remaining);
}
