import type { TransactionSql } from "../platform/db.ts";
import { applyTrigger, lockAttempt } from "./store.ts";

/**
 * resume-uploads: same attempt, same destinations, no re-encode; retention is not renewed.
 * Returns why it cannot (409) or undefined once the Worker has been told (through its
 * durable consumer, so a Worker that is away gets it when it returns). The job stays
 * WAITING_FOR_STORAGE until the Worker reports `upload-resumed`.
 */
export async function resumeUploads(tx: TransactionSql, attemptId: string): Promise<string | undefined> {
  const attempt = await lockAttempt(tx, attemptId);
  if (!attempt) return "The job has no attempt to resume";
  const [kept] = await tx<
    { uploadPauseExpiresAt: Date | null; disabledAt: Date | null; workerExists: boolean }[]
  >`
    select a.upload_pause_expires_at, w.disabled_at, w.id is not null as worker_exists
    from attempts a left join workers w on w.id = a.worker_id
    where a.id = ${attemptId}`;
  const resolution = await applyTrigger(tx, attempt, "resume-uploads", {
    keptOutputs: {
      pauseExpiresAt: kept?.uploadPauseExpiresAt ?? null,
      worker: { exists: kept?.workerExists ?? false, disabled: kept?.disabledAt != null },
    },
  });
  return resolution.kind === "refused" ? resolution.reason : undefined;
}
