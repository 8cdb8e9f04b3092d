/**
 * The SQL that finds the attempts the Manager moves by itself: deadlines the sweeper enforces
 * (dispatch timeout, kept uploads' retention, the job deadline, unconfirmed cancels) and the
 * attempts a Worker's change of life (offline, restarted, disabled) takes. Each query locks
 * the rows; applyTrigger (transitions.ts) moves them.
 */
import type postgres from "postgres";
import { HELD_ATTEMPT_STATES, sourceAttemptStates } from "../lifecycle/index.ts";
import type { TransactionSql } from "../platform/db.ts";
import { type LockedAttempt, lockedAttemptColumns } from "./transitions.ts";

// The states below are the table's source states of each trigger, written as literals: the
// planner matches a literal, not a parameter, to the partial indexes on attempts and jobs.
// applyTrigger checks every locked row against the table again.

/** Attempts, with their jobs, that `due` selects, earliest `by` first; locked, skipping those another Manager holds. */
function lockDue(
  tx: TransactionSql,
  due: postgres.Fragment,
  by: postgres.Fragment,
  limit: number,
): Promise<LockedAttempt[]> {
  return tx<LockedAttempt[]>`
    select ${lockedAttemptColumns(tx)} from attempts a join jobs j on j.id = a.job_id
    where ${due}
    order by ${by} limit ${limit}
    for update of a, j skip locked`;
}

/** Attempts whose dispatch deadline passed without `accepted`. */
export function lockDispatchTimeouts(tx: TransactionSql, limit: number): Promise<LockedAttempt[]> {
  const due = tx`a.state = 'DISPATCHED' and a.dispatch_deadline <= now()`;
  return lockDue(tx, due, tx`a.dispatch_deadline`, limit);
}

/** Attempts whose kept outputs' retention ran out. */
export function lockExpiredPauses(tx: TransactionSql, limit: number): Promise<LockedAttempt[]> {
  const due = tx`a.state = 'WAITING_FOR_STORAGE' and a.upload_pause_expires_at <= now()`;
  return lockDue(tx, due, tx`a.upload_pause_expires_at`, limit);
}

/** Unfinished jobs past their deadline, with their current attempt. */
export function lockPastDeadline(tx: TransactionSql, limit: number): Promise<LockedAttempt[]> {
  const due = tx`
    a.id = j.current_attempt_id and j.deadline_at <= now()
    and j.state in ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', 'WAITING_FOR_STORAGE')
    and a.completion_accepted_at is null`;
  return lockDue(tx, due, tx`j.deadline_at`, limit);
}

/**
 * Attempts a Worker still holds although their job waits for it to confirm a cancel
 * (CANCEL_REQUESTED), once the last cancel sent has gone unanswered for its wait: `initialMs`
 * after the first, doubling with each one sent again, at most `maxMs`. Only Workers that are
 * not OFFLINE: an OFFLINE one finds the cancel in its consumer when it comes back, and one
 * that does not come back loses the attempt.
 */
export function lockUnconfirmedCancels(
  tx: TransactionSql,
  limit: number,
  backoff: { initialMs: number; maxMs: number },
): Promise<LockedAttempt[]> {
  const due = tx`
    j.state = 'CANCEL_REQUESTED' and a.id = j.current_attempt_id
    and a.state = any(${HELD_ATTEMPT_STATES as never}) and a.completion_accepted_at is null
    and exists (select 1 from workers w where w.id = a.worker_id and w.connectivity <> 'OFFLINE')
    and a.cancel_sent_at <= now() - least(
      make_interval(secs => ${backoff.maxMs / 1000}),
      make_interval(secs => ${backoff.initialMs / 1000} * power(2, greatest(a.cancel_sends - 1, 0))))`;
  return lockDue(tx, due, tx`a.cancel_sent_at`, limit);
}

/**
 * The attempts of a Worker a change of its life applies to (the table's source states of
 * that trigger), but for completions already accepted: the Manager finishes those.
 */
export async function lockAttemptsOfWorker(
  tx: TransactionSql,
  workerId: string,
  trigger: "worker-offline" | "worker-restarted" | "worker-disabled",
  keep: readonly string[] = [],
): Promise<LockedAttempt[]> {
  return tx<LockedAttempt[]>`
    select ${lockedAttemptColumns(tx)} from attempts a join jobs j on j.id = a.job_id
    where a.worker_id = ${workerId} and a.state = any(${sourceAttemptStates(trigger)})
      and a.completion_accepted_at is null and a.id <> all(${keep as string[]}::uuid[])
    order by a.id
    for update of a, j`;
}

/** Hands attempts the previous instance left on disk to the Worker's new instance. */
export async function moveAttemptsToInstance(
  tx: TransactionSql,
  workerId: string,
  instanceId: string,
  attempts: readonly { attemptId: string; fencingToken: string }[],
): Promise<string[]> {
  if (attempts.length === 0) return [];
  const moved = await tx<{ id: string }[]>`
    update attempts a set instance_id = ${instanceId}, updated_at = now()
    from unnest(${attempts.map((x) => x.attemptId)}::uuid[], ${attempts.map((x) => x.fencingToken)}::bigint[])
           as kept(id, fencing_token),
         jobs j
    where a.id = kept.id and a.fencing_token = kept.fencing_token and a.worker_id = ${workerId}
      and j.id = a.job_id and j.current_attempt_id = a.id
      and a.state = any(${HELD_ATTEMPT_STATES as never})
      -- A completion the Manager accepted needs nothing more from the Worker (the promoter
      -- finishes it): going on with it would only upload again, in a slot soon counted free.
      and a.completion_accepted_at is null
    returning a.id`;
  return moved.map((row) => row.id);
}
