import type { KeptOutputs, OperatorTrigger, Resolution } from "../lifecycle/index.ts";
import type { TransactionSql } from "../platform/db.ts";
import { applyTrigger, type LockedAttempt, lockCurrentAttempt } from "./transitions.ts";

/**
 * An operator's request on a job (cancel, retry, resume-uploads), applied to its current
 * attempt by the one applier (the jobs feature calls it inside its own transaction).
 * Undefined when there is no such job; a refusal carries the table's reason (the API's 409).
 *
 * resume-uploads keeps the same attempt and destinations, with no re-encode and retention not
 * renewed; the Worker is told through its durable consumer, so one that is away gets it when
 * it returns, and the job stays WAITING_FOR_STORAGE until it reports `upload-resumed`.
 */
export async function applyOperatorRequest(
  tx: TransactionSql,
  jobId: string,
  trigger: OperatorTrigger,
): Promise<Resolution | undefined> {
  const attempt = await lockCurrentAttempt(tx, jobId);
  if (!attempt) return undefined;
  const keptOutputs = trigger === "resume-uploads" ? await keptOutputsOf(tx, attempt) : undefined;
  const resolution = await applyTrigger(tx, attempt, trigger, { keptOutputs });
  if (trigger === "resume-uploads" && resolution.kind === "refused") {
    const waiting = await inputWaitSince(tx, attempt);
    if (waiting) {
      return {
        kind: "refused",
        reason: `The job's attempt has waited for storage to read its input since ${waiting.toISOString()}: it has no uploads to resume, and its encode goes on by itself once the store answers`,
      };
    }
  }
  return resolution;
}

/** When a RUNNING attempt's reads of its input started waiting for storage, if they wait. */
async function inputWaitSince(tx: TransactionSql, attempt: LockedAttempt): Promise<Date | undefined> {
  if (attempt.state !== "RUNNING") return undefined;
  const [row] = await tx<{ inputWaitSince: Date | null }[]>`
    select input_wait_since from attempts where id = ${attempt.attemptId}`;
  return row?.inputWaitSince ?? undefined;
}

/** Until when the attempt's encoded outputs are kept, and whether the Worker keeping them can still upload. */
async function keptOutputsOf(tx: TransactionSql, attempt: LockedAttempt): Promise<KeptOutputs> {
  const [kept] = await tx<
    { uploadPauseExpiresAt: Date | null; disabledAt: Date | null; workerExists: boolean }[]
  >`
    select a.upload_pause_expires_at, w.disabled_at, w.id is not null as worker_exists
    from attempts a left join workers w on w.id = a.worker_id
    where a.id = ${attempt.attemptId}`;
  return {
    pauseExpiresAt: kept?.uploadPauseExpiresAt ?? null,
    worker: { exists: kept?.workerExists ?? false, disabled: kept?.disabledAt != null },
  };
}
