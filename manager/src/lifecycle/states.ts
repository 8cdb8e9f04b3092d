/** Job and attempt states as data, their predicates, and what the API shows of them. No I/O. */
import { assertNever } from "@tjm/platform";

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

/** Nothing moves a job out of these but the documented exceptions (retry of a FAILED job). */
export const TERMINAL_JOB_STATES = [
  "CANCELLED",
  "COMPLETED",
  "FAILED",
] as const satisfies readonly JobState[];

export const isTerminalJobState = (state: JobState): boolean =>
  (TERMINAL_JOB_STATES as readonly JobState[]).includes(state);

/** Jobs that are not finished: a deadline, a Worker's loss or a report may still move them. */
export const ACTIVE_JOB_STATES = [
  "QUEUED",
  "RUNNING",
  "CANCEL_REQUESTED",
  "WAITING_FOR_STORAGE",
] as const satisfies readonly JobState[];

/** States in which a Worker holds the attempt (it was dispatched and has not finished). */
export const HELD_ATTEMPT_STATES = [
  "DISPATCHED",
  "RUNNING",
  "UPLOADING",
  "WAITING_FOR_STORAGE",
] as const satisfies readonly AttemptState[];

export const isHeldAttemptState = (state: AttemptState): boolean =>
  (HELD_ATTEMPT_STATES as readonly AttemptState[]).includes(state);

export const TERMINAL_ATTEMPT_STATES = [
  "SUCCEEDED",
  "FAILED",
  "CANCELLED",
] as const satisfies readonly AttemptState[];

export const isTerminalAttemptState = (state: AttemptState): boolean =>
  (TERMINAL_ATTEMPT_STATES as readonly AttemptState[]).includes(state);

/** The state every attempt starts in: the first at submission, the next after a failure or a retry. */
export const NEW_ATTEMPT_STATE = "CREATED" satisfies AttemptState;

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
