/**
 * How reports, deadlines and lost Workers move attempts and jobs, as data. No I/O: store.ts
 * applies what these functions decide, inside the transaction that locked the rows.
 */
import type { Report } from "@tjm/protocol";
import type { AttemptState, JobState } from "../jobs/lifecycle.ts";

/** States in which a Worker holds the attempt (it was dispatched and has not finished). */
export const HELD_ATTEMPT_STATES = ["DISPATCHED", "RUNNING", "UPLOADING", "WAITING_FOR_STORAGE"] as const;

export const isHeldAttemptState = (state: AttemptState): boolean =>
  (HELD_ATTEMPT_STATES as readonly string[]).includes(state);

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

/** Why a report is not applied; each is acked, logged and counted, and changes nothing. */
export type StaleReason =
  | "unknown-attempt"
  | "not-current-attempt"
  | "fencing-token"
  | "other-worker"
  | "old-instance"
  | "attempt-ended";

export interface HeldAttempt {
  state: AttemptState;
  fencingToken: string;
  workerId: string | null;
  instanceId: string | null;
  isCurrent: boolean;
}

/**
 * The fencing check, and the commit point of every report: only the current attempt, at its
 * current fencing token, held by this Worker instance, may change anything. A NATS ack is no
 * such point (JetStream accepts acks after AckWait), so nothing else is trusted.
 */
export function checkFence(
  report: Pick<Report, "workerId" | "instanceId" | "fencingToken">,
  attempt: HeldAttempt | undefined,
): StaleReason | undefined {
  if (!attempt) return "unknown-attempt";
  if (!attempt.isCurrent) return "not-current-attempt";
  if (attempt.fencingToken !== report.fencingToken) return "fencing-token";
  if (attempt.workerId !== report.workerId) return "other-worker";
  if (attempt.instanceId !== report.instanceId) return "old-instance";
  if (!isHeldAttemptState(attempt.state)) return "attempt-ended";
  return undefined;
}

/** What a (fenced) report does. */
export type ReportEffect =
  | { kind: "ignore"; why: string }
  | { kind: "accept" }
  | { kind: "start-uploading" }
  | { kind: "pause-uploads"; reason: string }
  | { kind: "resume-uploads" }
  | { kind: "accept-completion" }
  | { kind: "fail"; failureCode: string; failureMessage: string }
  | { kind: "cancelled" };

export function reportEffect(report: Report, attemptState: AttemptState, jobState: JobState): ReportEffect {
  switch (report.type) {
    case "accepted":
      return attemptState === "DISPATCHED" ? { kind: "accept" } : { kind: "ignore", why: "already accepted" };
    case "rejected":
      return attemptState === "DISPATCHED"
        ? {
            kind: "fail",
            failureCode: FAILURE_CODES.leaseRejected,
            failureMessage: `The Worker rejected the lease: ${report.reason}`,
          }
        : { kind: "ignore", why: "the lease was already accepted" };
    case "started":
      // ffmpeg was spawned; the attempt has been RUNNING since it was accepted.
      return attemptState === "DISPATCHED" ? { kind: "accept" } : { kind: "ignore", why: "informational" };
    case "encoded":
      return attemptState === "DISPATCHED" || attemptState === "RUNNING"
        ? { kind: "start-uploading" }
        : { kind: "ignore", why: "already uploading" };
    case "upload-paused":
      return attemptState === "RUNNING" || attemptState === "UPLOADING"
        ? { kind: "pause-uploads", reason: report.reason }
        : { kind: "ignore", why: `attempt is ${attemptState}` };
    case "upload-resumed":
      return attemptState === "WAITING_FOR_STORAGE"
        ? { kind: "resume-uploads" }
        : { kind: "ignore", why: `attempt is ${attemptState}` };
    case "completed":
      return jobState === "CANCEL_REQUESTED" ? { kind: "cancelled" } : { kind: "accept-completion" };
    case "failed":
      return { kind: "fail", failureCode: report.failureCode, failureMessage: report.failureMessage };
    case "cancelled":
      return jobState === "CANCEL_REQUESTED"
        ? { kind: "cancelled" }
        : {
            kind: "fail",
            failureCode: FAILURE_CODES.abandoned,
            failureMessage: "The Worker gave the attempt up without being asked to cancel it",
          };
    default: {
      const unknown: never = report;
      return { kind: "ignore", why: `unknown report ${String((unknown as { type: string }).type)}` };
    }
  }
}

/** Retention of a paused upload: 24 h from the FIRST pause, never past the job's deadline. */
export const UPLOAD_RETENTION_MS = 24 * 3600 * 1000;

export function uploadPauseExpiry(firstPausedAt: Date, jobDeadline: Date): Date {
  return new Date(Math.min(firstPausedAt.getTime() + UPLOAD_RETENTION_MS, jobDeadline.getTime()));
}

/** Why resume-uploads cannot be honoured (409), or undefined when it can. */
export function resumeUploadsRefusal(input: {
  jobState: JobState;
  attemptState: AttemptState;
  now: Date;
  pauseExpiresAt: Date | null;
  jobDeadline: Date;
  worker: { exists: boolean; disabled: boolean };
}): string | undefined {
  if (input.jobState !== "WAITING_FOR_STORAGE" || input.attemptState !== "WAITING_FOR_STORAGE") {
    return `Only a job WAITING_FOR_STORAGE can resume uploads; this job is ${input.jobState}`;
  }
  if (!input.pauseExpiresAt || input.now >= input.pauseExpiresAt) {
    return "The kept outputs' retention has expired; retry the job to encode again";
  }
  if (input.now >= input.jobDeadline) return "The job's deadline has passed";
  if (!input.worker.exists || input.worker.disabled) {
    return "The Worker that holds the encoded outputs is gone or disabled; retry the job to encode again";
  }
  return undefined;
}
