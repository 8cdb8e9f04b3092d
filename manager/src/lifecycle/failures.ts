/** Why attempts fail, and what follows a failure for the job. No I/O. */
import type { JobState } from "./states.ts";

/** Failure codes the Manager sets; Workers report their own (INPUT_NOT_FOUND, ENCODE_FAILED …). */
export const FAILURE_CODES = {
  dispatchTimeout: "DISPATCH_TIMEOUT",
  workerLost: "WORKER_LOST",
  workerDisabled: "WORKER_DISABLED",
  leaseRejected: "LEASE_REJECTED",
  abandoned: "ABANDONED",
  uploadRetentionExpired: "UPLOAD_RETENTION_EXPIRED",
  deadlineExceeded: "DEADLINE_EXCEEDED",
  /** A promoted output's size differs from the attempt's completed report (promoter.ts). */
  outputMismatch: "OUTPUT_MISMATCH",
} as const;
export type ManagerFailureCode = (typeof FAILURE_CODES)[keyof typeof FAILURE_CODES];

/** Failures that say nothing about the job itself: the next attempt may well succeed. */
const RETRYABLE = new Set<string>([
  FAILURE_CODES.dispatchTimeout,
  FAILURE_CODES.workerLost,
  FAILURE_CODES.workerDisabled,
  FAILURE_CODES.leaseRejected,
  FAILURE_CODES.abandoned,
]);

export const isRetryableFailure = (code: string): boolean => RETRYABLE.has(code);

/** What follows a failed attempt for its job. */
export type AfterFailure = "next-attempt" | "job-failed" | "job-cancelled";

export function afterAttemptFailed(input: {
  failureCode: string;
  jobState: JobState;
  attemptNumber: number;
  maxAttempts: number;
  deadlinePassed: boolean;
}): AfterFailure {
  if (input.jobState === "CANCEL_REQUESTED") return "job-cancelled";
  if (!isRetryableFailure(input.failureCode)) return "job-failed";
  if (input.attemptNumber >= input.maxAttempts || input.deadlinePassed) return "job-failed";
  return "next-attempt";
}
