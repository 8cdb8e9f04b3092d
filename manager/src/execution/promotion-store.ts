/**
 * The SQL of promotion: accepted completions waiting for their outputs to be copied to their
 * destinations, the record of each copy made, and the manifest. The promoter's
 * promotion-done and promotion-failed go through applyTrigger (transitions.ts).
 */
import type { ExecutionPlan, OutputResult } from "@tjm/protocol";
import type { TransactionSql } from "../platform/db.ts";
import { type LockedAttempt, lockedAttemptColumns } from "./transitions.ts";

/** Accepted completions whose outputs still need promoting; skips those another Manager holds. */
export async function lockPendingPromotions(
  tx: TransactionSql,
  limit: number,
): Promise<
  (LockedAttempt & {
    result: { outputs: PromotedOutput[]; logsUri: string };
    executionPlan: ExecutionPlan;
    /** Outputs an earlier, cut pass already copied to their destinations. */
    promotedOutputIds: string[];
  })[]
> {
  return tx`
    select ${lockedAttemptColumns(tx)}, a.result, j.execution_plan, a.promoted_output_ids
    from attempts a join jobs j on j.id = a.job_id
    where a.state = 'UPLOADING' and a.completion_accepted_at is not null
    order by a.completion_accepted_at limit ${limit}
    for update of a, j skip locked`;
}

/** Records that an output of the attempt is at its destination, so no later pass copies it again. */
export async function markOutputPromoted(
  tx: TransactionSql,
  attemptId: string,
  outputId: string,
): Promise<void> {
  await tx`
    update attempts set promoted_output_ids = array_append(promoted_output_ids, ${outputId})
    where id = ${attemptId} and not (${outputId} = any(promoted_output_ids))`;
}

/**
 * The manifest as written to the plan's manifestUri, kept beside the completed report's outputs
 * (in `result`) for the job's detail, which then needs no read from the store.
 */
export async function recordManifest(tx: TransactionSql, attemptId: string, manifest: object): Promise<void> {
  await tx`
    update attempts set result = result || jsonb_build_object('manifest', ${tx.json(manifest as never)}::jsonb)
    where id = ${attemptId}`;
}

export type PromotedOutput = OutputResult;
