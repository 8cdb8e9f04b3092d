/** Outputs kept on a Worker while storage is away: their retention, and when a resume may be asked. No I/O. */

/** Retention of a paused upload: 24 h from the FIRST pause, never past the job's deadline. */
export const UPLOAD_RETENTION_MS = 24 * 3600 * 1000;

export function uploadPauseExpiry(firstPausedAt: Date, jobDeadline: Date): Date {
  return new Date(Math.min(firstPausedAt.getTime() + UPLOAD_RETENTION_MS, jobDeadline.getTime()));
}

/** What a resume-uploads request finds about the outputs a waiting attempt's Worker keeps. */
export interface KeptOutputs {
  pauseExpiresAt: Date | null;
  worker: { exists: boolean; disabled: boolean };
}

/**
 * Why the outputs of an attempt WAITING_FOR_STORAGE cannot be uploaded again (409), or
 * undefined when they can. The job and attempt states are the transition table's to check.
 */
export function resumeUploadsRefusal(
  input: KeptOutputs & { now: Date; jobDeadline: Date },
): string | undefined {
  if (!input.pauseExpiresAt || input.now >= input.pauseExpiresAt) {
    return "The kept outputs' retention has expired; retry the job to encode again";
  }
  if (input.now >= input.jobDeadline) return "The job's deadline has passed";
  if (!input.worker.exists || input.worker.disabled) {
    return "The Worker that holds the encoded outputs is gone or disabled; retry the job to encode again";
  }
  return undefined;
}
