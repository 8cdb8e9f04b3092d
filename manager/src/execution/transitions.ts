/**
 * The applier of the lifecycle table: every trigger that moves a job or its current attempt
 * (an operator's request, a Worker's report, a sweep, a Worker's change of life, the promoter)
 * is resolved by `applyTrigger` and written by the same SQL, so a job's times, its place in the
 * queue and its announcement do not depend on who moved it. Every function runs inside the
 * caller's transaction, on rows the caller locked, and writes the announcements of what it
 * changed to the outbox in the same transaction.
 *
 * Two transitions write their states themselves, taken from the table by name: job-submitted
 * (`insertJob` in jobs/store.ts), which creates the job and its first attempt in one statement,
 * so there is no row yet to lock and resolve against; and lease-dispatched
 * (execution/dispatch-store.ts), which runs in the scheduler's batch on rows its queue read chose
 * in the transition's source states, and whose lease command carries what only dispatch knows.
 */
import { PROTOCOL_VERSION } from "@tjm/protocol";
import type postgres from "postgres";
import {
  type AttemptState,
  HELD_ATTEMPT_STATES,
  isTerminalAttemptState,
  isTerminalJobState,
  type JobState,
  type KeptOutputs,
  NEW_ATTEMPT_STATE,
  type Resolution,
  resolve,
  type Transition,
  type Trigger,
  UPLOAD_RETENTION_MS,
} from "../lifecycle/index.ts";
import { enqueueOutbox, sendCommand } from "../outbox/index.ts";
import type { TransactionSql } from "../platform/db.ts";

/** An attempt with its job, locked for a change. */
export interface LockedAttempt {
  attemptId: string;
  jobId: string;
  attemptNumber: number;
  state: AttemptState;
  fencingToken: string;
  workerId: string | null;
  instanceId: string | null;
  completionAcceptedAt: Date | null;
  jobState: JobState;
  currentAttemptId: string;
  deadlineAt: Date;
  organizationId: string;
  projectId: string;
}

/** The columns of a LockedAttempt, for queries over `attempts a join jobs j`. */
export const lockedAttemptColumns = (tx: TransactionSql) => tx`
  a.id as attempt_id, a.job_id, a.attempt_number, a.state, a.fencing_token, a.worker_id, a.instance_id,
  a.completion_accepted_at, j.state as job_state, j.current_attempt_id, j.deadline_at, j.organization_id,
  j.project_id`;

export async function lockAttempt(tx: TransactionSql, attemptId: string): Promise<LockedAttempt | undefined> {
  const [row] = await tx<LockedAttempt[]>`
    select ${lockedAttemptColumns(tx)} from attempts a join jobs j on j.id = a.job_id
    where a.id = ${attemptId} for update of a, j`;
  return row;
}

/**
 * A job's current attempt, with the job; undefined when there is no such job. Locked attempt
 * first, then job, as every other lock of an attempt takes them (reports, sweeps, promotion): an
 * operator's cancel taking the job first deadlocked with a Worker's disabling on the same attempt.
 * A row whose job moved to a next attempt while it waited for the lock no longer matches, and
 * is read again.
 */
export async function lockCurrentAttempt(
  tx: TransactionSql,
  jobId: string,
): Promise<LockedAttempt | undefined> {
  for (;;) {
    const [row] = await tx<LockedAttempt[]>`
      select ${lockedAttemptColumns(tx)} from attempts a join jobs j on j.id = a.job_id
      where j.id = ${jobId} and a.id = j.current_attempt_id
      for update of a, j`;
    if (row) return row;
    const [job] = await tx`select from jobs where id = ${jobId}`;
    if (!job) return undefined;
  }
}

/**
 * What a trigger brings that the table cannot know: the Worker's words and outputs, a pause's
 * reason, an input wait's start and last error.
 */
export interface TransitionInput {
  failure?: { code?: string; message: string; logsUri?: string | undefined };
  pauseReason?: string;
  inputWait?: { since: string; lastError: string };
  completion?: { outputs: unknown[]; logsUri: string };
}

export interface TriggerContext {
  /** MAX_ATTEMPTS, where the trigger may fail the attempt. */
  maxAttempts?: number;
  input?: TransitionInput;
  keptOutputs?: KeptOutputs;
}

/**
 * Asks the lifecycle table what a trigger does to a locked attempt and its job, and applies
 * the transition it picks; a refusal changes nothing.
 */
export async function applyTrigger(
  tx: TransactionSql,
  attempt: LockedAttempt,
  trigger: Trigger,
  context: TriggerContext = {},
): Promise<Resolution> {
  const resolution = resolve(
    trigger,
    { job: attempt.jobState, attempt: attempt.state },
    {
      now: new Date(),
      jobDeadline: attempt.deadlineAt,
      completionAccepted: attempt.completionAcceptedAt !== null,
      attemptNumber: attempt.attemptNumber,
      maxAttempts: context.maxAttempts,
      reportedFailureCode: context.input?.failure?.code,
      keptOutputs: context.keptOutputs,
    },
  );
  if (resolution.kind === "transition")
    await applyTransition(tx, attempt, resolution.transition, context.input);
  return resolution;
}

/**
 * Runs the SQL of a transition: commands first, then the attempt's new state and what it
 * records, the job's new state or its next attempt, the announcement, and a draining
 * Worker's release once the attempt ended.
 */
async function applyTransition(
  tx: TransactionSql,
  attempt: LockedAttempt,
  transition: Transition,
  input: TransitionInput = {},
): Promise<void> {
  const { to, effects } = transition;
  if (effects.command === "cancel") await sendCancel(tx, attempt);
  if (effects.command === "resume-uploads") await requestUploadsResume(tx, attempt);
  const failure = effects.failure && failureOf(transition, input);
  const recorded = await updateAttempt(tx, attempt, transition, failure, input);
  const extra: Record<string, unknown> = {};
  if (failure) extra.failureCode = failure.code;
  if (effects.inputWait === "waiting") extra.waitingForInput = input.inputWait;
  if (effects.inputWait === "reading") extra.waitingForInput = null;
  if (to.attempt === "WAITING_FOR_STORAGE") {
    extra.reason = input.pauseReason;
    extra.uploadPausedAt = recorded.uploadPausedAt?.toISOString();
    extra.uploadPauseExpiresAt = recorded.uploadPauseExpiresAt?.toISOString();
  }
  if (effects.nextAttempt) Object.assign(extra, await createNextAttempt(tx, attempt, transition));
  else if (to.job !== undefined && to.job !== attempt.jobState) await setJobState(tx, attempt.jobId, to.job);
  if (effects.event === "job.updated") await jobChanged(tx, attempt, to.job ?? attempt.jobState, extra);
  if (to.attempt && isTerminalAttemptState(to.attempt)) await markDrainedIfIdle(tx, attempt.workerId);
}

/** Tells the Worker holding an attempt (if any) to stop it and clean up. */
async function sendCancel(tx: TransactionSql, attempt: LockedAttempt): Promise<void> {
  if (!attempt.workerId) return;
  await sendCommand(tx, attempt.workerId, {
    type: "cancel",
    protocolVersion: PROTOCOL_VERSION,
    attemptId: attempt.attemptId,
    fencingToken: attempt.fencingToken,
  });
  await tx`update attempts set cancel_sent_at = now(), cancel_sends = cancel_sends + 1 where id = ${attempt.attemptId}`;
}

/** resume-uploads: same attempt, same destinations, no re-encode; retention is not renewed. */
async function requestUploadsResume(tx: TransactionSql, attempt: LockedAttempt): Promise<void> {
  await tx`
    update attempts set upload_resume_requested_at = now(), upload_recovery_count = upload_recovery_count + 1,
      updated_at = now()
    where id = ${attempt.attemptId}`;
  await sendCommand(tx, attempt.workerId as string, {
    type: "resume-uploads",
    protocolVersion: PROTOCOL_VERSION,
    attemptId: attempt.attemptId,
    fencingToken: attempt.fencingToken,
  });
}

/** The failure's code and message: the table's, or the trigger's where the table has none. */
function failureOf(
  transition: Transition,
  input: TransitionInput,
): { code: string; message: string; logsUri?: string | undefined } {
  const spec = transition.effects.failure;
  const code = spec?.code === "reported" ? input.failure?.code : spec?.code;
  const message = spec?.message ?? input.failure?.message;
  if (code === undefined || message === undefined) {
    throw new Error(`${transition.name} needs the failure's code and message`);
  }
  return { code, message, logsUri: input.failure?.logsUri };
}

const joined = (tx: TransactionSql, parts: postgres.Fragment[]) =>
  parts.reduce((list, part) => tx`${list}, ${part}`);

/** The attempt's new state and what it records on the way. */
async function updateAttempt(
  tx: TransactionSql,
  attempt: LockedAttempt,
  transition: Transition,
  failure: ReturnType<typeof failureOf> | undefined,
  input: TransitionInput,
): Promise<{ uploadPausedAt?: Date; uploadPauseExpiresAt?: Date }> {
  const { to, effects } = transition;
  const { completion } = input;
  const sets: postgres.Fragment[] = [tx`updated_at = now()`];
  if (to.attempt) sets.push(tx`state = ${to.attempt}`);
  if (effects.inputWait === "waiting") {
    if (!input.inputWait) throw new Error(`${transition.name} needs the wait's start and last error`);
    sets.push(
      tx`input_wait_since = ${new Date(input.inputWait.since)}`,
      tx`input_wait_error = ${input.inputWait.lastError}`,
    );
  }
  // Only a RUNNING attempt reads its input; a wait never outlives it.
  if (effects.inputWait === "reading" || (to.attempt !== undefined && to.attempt !== "RUNNING")) {
    sets.push(tx`input_wait_since = null`, tx`input_wait_error = null`);
  }
  // RUNNING or UPLOADING: the Worker has it, whether or not its `accepted` arrived.
  if (to.attempt === "RUNNING" || to.attempt === "UPLOADING") {
    sets.push(tx`accepted_at = coalesce(accepted_at, now())`);
  }
  if (to.attempt === "WAITING_FOR_STORAGE") {
    // Retention runs from the FIRST pause and is never renewed (uploads.ts).
    sets.push(
      tx`upload_paused_at = coalesce(upload_paused_at, now())`,
      tx`upload_pause_expires_at = coalesce(upload_pause_expires_at,
        least(now() + make_interval(secs => ${UPLOAD_RETENTION_MS / 1000}), ${attempt.deadlineAt}))`,
    );
  }
  if (to.attempt && isTerminalAttemptState(to.attempt)) sets.push(tx`ended_at = now()`);
  if (failure) {
    sets.push(
      tx`failure_code = ${failure.code}`,
      tx`failure_message = ${failure.message}`,
      tx`logs_uri = coalesce(${failure.logsUri ?? null}, logs_uri)`,
    );
  }
  if (effects.acceptCompletion) {
    if (!completion) throw new Error(`${transition.name} needs the completed report's outputs`);
    sets.push(
      tx`result = ${tx.json(completion as never)}`,
      tx`logs_uri = ${completion.logsUri}`,
      tx`completion_accepted_at = now()`,
    );
  }
  if (sets.length === 1) return {};
  const [recorded] = await tx<{ uploadPausedAt: Date | null; uploadPauseExpiresAt: Date | null }[]>`
    update attempts set ${joined(tx, sets)} where id = ${attempt.attemptId}
    returning upload_paused_at, upload_pause_expires_at`;
  return {
    uploadPausedAt: recorded?.uploadPausedAt ?? undefined,
    uploadPauseExpiresAt: recorded?.uploadPauseExpiresAt ?? undefined,
  };
}

/**
 * The job's new state. started_at is the first time a Worker had the job in this run (kept
 * through the run's next attempts); completed_at is set only by COMPLETED, never by FAILED
 * or CANCELLED (the API: "null until completed").
 */
async function setJobState(tx: TransactionSql, jobId: string, to: JobState): Promise<void> {
  const sets: postgres.Fragment[] = [tx`state = ${to}`, tx`updated_at = now()`];
  if (to === "RUNNING") sets.push(tx`started_at = coalesce(started_at, now())`);
  if (to === "COMPLETED") sets.push(tx`completed_at = now()`);
  await tx`update jobs set ${joined(tx, sets)} where id = ${jobId}`;
}

/**
 * The job's next attempt, with the next number and fencing token, and where the job stands
 * in the queue (lockQueuedJobs orders by priority, then queued_at). The requeue rule:
 *
 * - A job still active (its attempt failed with DISPATCH_TIMEOUT, WORKER_LOST, LEASE_REJECTED,
 *   ABANDONED or a retryable reported failure) KEEPS its place: queued_at, and started_at,
 *   stay as they were. The failure was a Worker's, not the job's, and a job sent to the back
 *   would wait for the whole queue again each time a Worker dies under it: at 10,000 queued
 *   jobs one crash would turn minutes into hours. A job that takes Workers down with it cannot
 *   hold the head of the queue for long: MAX_ATTEMPTS and the job deadline bound its next
 *   attempts, and priority still comes first.
 * - A job an operator retries from FAILED was out of the queue (a terminal state): it enters
 *   it again like a submission, at the back (queued_at now), and its run starts afresh
 *   (started_at and completed_at null), so it does not jump ahead of work queued meanwhile.
 */
async function createNextAttempt(
  tx: TransactionSql,
  attempt: LockedAttempt,
  transition: Transition,
): Promise<{ nextAttemptId: string; nextAttemptNumber: number | undefined }> {
  const newAttemptId = crypto.randomUUID();
  const newRun = isTerminalJobState(attempt.jobState)
    ? tx`, queued_at = now(), started_at = null, completed_at = null`
    : tx``;
  const [created] = await tx<{ attemptNumber: number }[]>`
    with bumped as (
      update jobs set last_fencing_token = last_fencing_token + 1, current_attempt_id = ${newAttemptId},
        state = ${transition.to.job as JobState}, updated_at = now() ${newRun}
      where id = ${attempt.jobId}
      returning id, last_fencing_token
    )
    insert into attempts (id, job_id, attempt_number, state, fencing_token, created_at, updated_at)
    select ${newAttemptId}, id, ${attempt.attemptNumber + 1}, ${NEW_ATTEMPT_STATE}, last_fencing_token, now(), now()
    from bumped
    returning attempt_number`;
  return { nextAttemptId: newAttemptId, nextAttemptNumber: created?.attemptNumber };
}

async function jobChanged(
  tx: TransactionSql,
  attempt: LockedAttempt,
  to: JobState,
  extra: Record<string, unknown>,
): Promise<void> {
  await enqueueOutbox(tx, "job.updated", {
    jobId: attempt.jobId,
    attemptId: attempt.attemptId,
    organizationId: attempt.organizationId,
    projectId: attempt.projectId,
    from: attempt.jobState,
    to,
    occurredAt: new Date().toISOString(),
    ...extra,
  });
}

/** Marks a draining Worker drained once it holds nothing more. */
export async function markDrainedIfIdle(tx: TransactionSql, workerId: string | null): Promise<void> {
  if (!workerId) return;
  const [drained] = await tx<{ id: string; instanceId: string }[]>`
    update workers set drained_at = now(), updated_at = now()
    where id = ${workerId} and drain_requested_at is not null and drained_at is null
      and not exists (select 1 from attempts where worker_id = ${workerId} and state = any(${HELD_ATTEMPT_STATES as never}))
    returning id, instance_id`;
  if (drained) {
    await enqueueOutbox(tx, "worker.updated", {
      workerId,
      instanceId: drained.instanceId,
      change: "drained",
    });
  }
}
