/** Job and attempt states as data, with the decisions the routes make from them. No I/O. */

export const JOB_STATES = [
  "QUEUED",
  "RUNNING",
  "CANCEL_REQUESTED",
  "CANCELLED",
  "COMPLETED",
  "FAILED",
  "WAITING_FOR_STORAGE",
] as const;
export type JobState = (typeof JOB_STATES)[number];

export const ATTEMPT_STATES = [
  "CREATED",
  "DISPATCHED",
  "RUNNING",
  "UPLOADING",
  "WAITING_FOR_STORAGE",
  "SUCCEEDED",
  "FAILED",
  "CANCELLED",
] as const;
export type AttemptState = (typeof ATTEMPT_STATES)[number];

export const isTerminalJobState = (state: JobState): boolean =>
  state === "CANCELLED" || state === "COMPLETED" || state === "FAILED";

export function assertNever(value: never): never {
  throw new Error(`unexpected value ${String(value)}`);
}

/** What POST /cancel does to a job in a given state. */
export type CancelDecision =
  | { kind: "cancel-now" }
  | { kind: "already-cancelling" }
  | { kind: "refuse"; reason: string }
  | { kind: "held-by-worker" };

export function decideCancel(state: JobState): CancelDecision {
  switch (state) {
    case "QUEUED":
      return { kind: "cancel-now" };
    case "CANCEL_REQUESTED":
    case "CANCELLED":
      return { kind: "already-cancelling" };
    case "COMPLETED":
    case "FAILED":
      return { kind: "refuse", reason: `Job is ${state} and can no longer be cancelled` };
    case "RUNNING":
    case "WAITING_FOR_STORAGE":
      return { kind: "held-by-worker" };
    default:
      return assertNever(state);
  }
}

/** What POST /retry does: only a FAILED job gets a new attempt. */
export type RetryDecision = { kind: "retry" } | { kind: "refuse"; reason: string };

export function decideRetry(state: JobState): RetryDecision {
  switch (state) {
    case "FAILED":
      return { kind: "retry" };
    case "QUEUED":
    case "RUNNING":
    case "CANCEL_REQUESTED":
    case "CANCELLED":
    case "COMPLETED":
    case "WAITING_FOR_STORAGE":
      return { kind: "refuse", reason: `Only a FAILED job can be retried; this job is ${state}` };
    default:
      return assertNever(state);
  }
}

/**
 * Progress shown for an attempt. Live progress lives only in Manager memory, so a running
 * attempt shows null until its Worker reports (and again after a Manager restart).
 */
export function attemptProgress(state: AttemptState, live: number | undefined): number | null {
  switch (state) {
    case "CREATED":
      return 0;
    case "SUCCEEDED":
      return 100;
    case "DISPATCHED":
    case "RUNNING":
    case "UPLOADING":
    case "WAITING_FOR_STORAGE":
    case "FAILED":
    case "CANCELLED":
      return live ?? null;
    default:
      return assertNever(state);
  }
}
