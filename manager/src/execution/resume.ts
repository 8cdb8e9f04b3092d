import { PROTOCOL_VERSION } from "@tjm/protocol";
import type { TransactionSql } from "../platform/db.ts";
import { sendCommand } from "../platform/outbox.ts";
import { resumeUploadsRefusal } from "./lifecycle.ts";
import { lockAttempt } from "./store.ts";

/**
 * resume-uploads: same attempt, same destinations, no re-encode; retention is not renewed.
 * Returns why it cannot (409) or undefined once the Worker has been told (through its
 * durable consumer, so a Worker that is away gets it when it returns). The job stays
 * WAITING_FOR_STORAGE until the Worker reports `upload-resumed`.
 */
export async function resumeUploads(tx: TransactionSql, attemptId: string): Promise<string | undefined> {
  const attempt = await lockAttempt(tx, attemptId);
  if (!attempt) return "The job has no attempt to resume";
  const [row] = await tx<
    { uploadPauseExpiresAt: Date | null; disabledAt: Date | null; workerExists: boolean }[]
  >`
    select a.upload_pause_expires_at, w.disabled_at, w.id is not null as worker_exists
    from attempts a left join workers w on w.id = a.worker_id
    where a.id = ${attemptId}`;
  const refusal = resumeUploadsRefusal({
    jobState: attempt.jobState,
    attemptState: attempt.state,
    now: new Date(),
    pauseExpiresAt: row?.uploadPauseExpiresAt ?? null,
    jobDeadline: attempt.deadlineAt,
    worker: { exists: row?.workerExists ?? false, disabled: row?.disabledAt != null },
  });
  if (refusal) return refusal;
  await tx`
    update attempts set upload_resume_requested_at = now(), upload_recovery_count = upload_recovery_count + 1,
      updated_at = now()
    where id = ${attemptId}`;
  await sendCommand(tx, attempt.workerId as string, {
    type: "resume-uploads",
    protocolVersion: PROTOCOL_VERSION,
    attemptId,
    fencingToken: attempt.fencingToken,
  });
  return undefined;
}
