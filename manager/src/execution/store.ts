/**
 * The SQL of execution: leases, and the transitions the lifecycle table picks for an attempt
 * and its job. Every function runs inside the caller's transaction, on rows the caller
 * locked, and writes the announcements of what it changed to the outbox in the same
 * transaction.
 */
import { type ExecutionPlan, PROTOCOL_VERSION, type StorageSettings } from "@tjm/protocol";
import { splitS3Uri } from "@tjm/storage";
import type postgres from "postgres";
import {
  type AttemptState,
  HELD_ATTEMPT_STATES,
  isTerminalAttemptState,
  type JobState,
  type KeptOutputs,
  NEW_ATTEMPT_STATE,
  type Resolution,
  resolve,
  sourceAttemptStates,
  type Transition,
  type Trigger,
  transitionNamed,
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

const lockedAttemptColumns = (tx: TransactionSql) => tx`
  a.id as attempt_id, a.job_id, a.attempt_number, a.state, a.fencing_token, a.worker_id, a.instance_id,
  a.completion_accepted_at, j.state as job_state, j.current_attempt_id, j.deadline_at, j.organization_id,
  j.project_id`;

export async function lockAttempt(tx: TransactionSql, attemptId: string): Promise<LockedAttempt | undefined> {
  const [row] = await tx<LockedAttempt[]>`
    select ${lockedAttemptColumns(tx)} from attempts a join jobs j on j.id = a.job_id
    where a.id = ${attemptId} for update of a, j`;
  return row;
}

/** Tells the Worker holding an attempt (if any) to stop it and clean up. */
export async function sendCancel(
  tx: TransactionSql,
  attempt: { attemptId: string; fencingToken: string; workerId: string | null },
): Promise<void> {
  if (!attempt.workerId) return;
  await sendCommand(tx, attempt.workerId, {
    type: "cancel",
    protocolVersion: PROTOCOL_VERSION,
    attemptId: attempt.attemptId,
    fencingToken: attempt.fencingToken,
  });
  await tx`update attempts set cancel_sent_at = now(), cancel_sends = cancel_sends + 1 where id = ${attempt.attemptId}`;
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

// ---- dispatch ----------------------------------------------------------------------------

export interface QueuedJobRow {
  jobId: string;
  workerPool: string;
  requiredCapabilities: string[];
  protocolVersion: number;
  outputs: { video?: { codec: string }; audio?: { codec: string } }[];
  currentAttemptId: string;
}

/** Queued jobs whose current attempt waits for a Worker, by priority then age; locked. */
export async function lockQueuedJobs(
  tx: TransactionSql,
  limit: number,
  pools: readonly string[],
): Promise<QueuedJobRow[]> {
  return tx<QueuedJobRow[]>`
    select j.id as job_id, j.worker_pool, j.required_capabilities, j.protocol_version,
           j.execution_plan->'outputs' as outputs, j.current_attempt_id
    from jobs j join attempts a on a.id = j.current_attempt_id
    where j.state = 'QUEUED' and a.state = 'CREATED' and j.worker_pool = any(${pools as string[]})
    order by j.priority desc, j.queued_at, j.id
    limit ${limit}
    for update of j skip locked`;
}

export interface CandidateWorkerRow {
  workerId: string;
  instanceId: string;
  pool: string;
  protocolVersion: number;
  capabilities: string[];
  capacity: number;
  load: number;
}

/** ONLINE Workers that take leases, with how many slots their held attempts occupy; share-locked. */
export async function candidateWorkers(tx: TransactionSql): Promise<CandidateWorkerRow[]> {
  return tx<CandidateWorkerRow[]>`
    select w.id as worker_id, w.instance_id, w.pool, w.protocol_version, w.capabilities,
           least(w.host_capacity, coalesce(w.capacity_cap, w.host_capacity)) as capacity,
           (select count(*)::int from attempts a
             where a.worker_id = w.id and a.state in ('DISPATCHED', 'RUNNING', 'UPLOADING')) as load
    from workers w
    where w.connectivity = 'ONLINE' and w.drain_requested_at is null and w.disabled_at is null
    -- A drain, disable or connectivity change of one of these Workers waits for the leases
    -- written here, then sees (and fails or finishes) them.
    for share of w`;
}

export interface LeaseSettings {
  storage: StorageSettings;
  dispatchTimeoutMs: number;
  protocolVersion: number;
}

const LEASE = transitionNamed("lease-dispatched");

/**
 * The lease (lockQueuedJobs chose a QUEUED job's CREATED attempt): the attempt goes
 * DISPATCHED to the Worker's current instance with the job's next fencing token and a
 * dispatch deadline, and the lease command goes to the outbox.
 */
export async function dispatch(
  tx: TransactionSql,
  assignment: { jobId: string; attemptId: string; workerId: string; instanceId: string },
  settings: LeaseSettings,
): Promise<void> {
  const [job] = await tx<{ lastFencingToken: string; executionPlan: ExecutionPlan }[]>`
    update jobs set last_fencing_token = last_fencing_token + 1, updated_at = now()
    where id = ${assignment.jobId}
    returning last_fencing_token, execution_plan`;
  if (!job) throw new Error(`job ${assignment.jobId} vanished while being dispatched`);
  const [attempt] = await tx<{ attemptNumber: number; dispatchDeadline: Date }[]>`
    update attempts set state = ${LEASE.to.attempt as AttemptState}, worker_id = ${assignment.workerId},
      instance_id = ${assignment.instanceId}, fencing_token = ${job.lastFencingToken},
      dispatched_at = now(), dispatch_deadline = now() + make_interval(secs => ${settings.dispatchTimeoutMs / 1000}),
      updated_at = now()
    where id = ${assignment.attemptId}
    returning attempt_number, dispatch_deadline`;
  if (!attempt) throw new Error(`attempt ${assignment.attemptId} vanished while being dispatched`);
  const plan = job.executionPlan;
  await sendCommand(tx, assignment.workerId, {
    type: "lease",
    protocolVersion: settings.protocolVersion as never,
    attemptId: assignment.attemptId,
    fencingToken: job.lastFencingToken,
    jobId: assignment.jobId,
    attemptNumber: attempt.attemptNumber,
    plan,
    storage: settings.storage,
    workDirectory: plan.workspace?.rootDirectory ?? null,
    staging: plan.outputs.map((output) => ({
      outputId: output.id,
      uri: stagingUri(output.destinationUri, assignment.jobId, assignment.attemptId, output.id),
    })),
    logsUri: logsUri(plan.outputs[0]?.destinationUri ?? "", assignment.jobId, attempt.attemptNumber),
    dispatchDeadline: attempt.dispatchDeadline.toISOString(),
  });
}

const bucketOf = (uri: string) => splitS3Uri(uri).bucket;

/** Attempt-scoped staging key in the destination's bucket; only the Manager promotes it. */
export function stagingUri(
  destinationUri: string,
  jobId: string,
  attemptId: string,
  outputId: string,
): string {
  return `s3://${bucketOf(destinationUri)}/.tjm-staging/${jobId}/${attemptId}/${outputId}`;
}

/** The attempt's ffmpeg log, in the first output's bucket. */
export function logsUri(firstDestinationUri: string, jobId: string, attemptNumber: number): string {
  return `s3://${bucketOf(firstDestinationUri)}/.tjm-logs/${jobId}/attempt-${attemptNumber}.log`;
}

// ---- transitions -------------------------------------------------------------------------

/** What a trigger brings that the table cannot know: the Worker's words and outputs, a pause's reason. */
export interface TransitionInput {
  failure?: { code?: string; message: string; logsUri?: string | undefined };
  pauseReason?: string;
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
  const recorded = await updateAttempt(tx, attempt, transition, failure, input.completion);
  const extra: Record<string, unknown> = {};
  if (failure) extra.failureCode = failure.code;
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
  completion: TransitionInput["completion"],
): Promise<{ uploadPausedAt?: Date; uploadPauseExpiresAt?: Date }> {
  const { to, effects } = transition;
  const sets: postgres.Fragment[] = [tx`updated_at = now()`];
  if (to.attempt) sets.push(tx`state = ${to.attempt}`);
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

async function setJobState(tx: TransactionSql, jobId: string, to: JobState): Promise<void> {
  const sets: postgres.Fragment[] = [tx`state = ${to}`, tx`updated_at = now()`];
  if (to === "RUNNING") sets.push(tx`started_at = coalesce(started_at, now())`);
  if (to === "COMPLETED") sets.push(tx`completed_at = now()`);
  await tx`update jobs set ${joined(tx, sets)} where id = ${jobId}`;
}

/** The job's next attempt, with the next fencing token; the job keeps its place in the queue. */
async function createNextAttempt(
  tx: TransactionSql,
  attempt: LockedAttempt,
  transition: Transition,
): Promise<{ nextAttemptId: string; nextAttemptNumber: number | undefined }> {
  const newAttemptId = crypto.randomUUID();
  const [created] = await tx<{ attemptNumber: number }[]>`
    with bumped as (
      update jobs set last_fencing_token = last_fencing_token + 1, current_attempt_id = ${newAttemptId},
        state = ${transition.to.job as JobState}, updated_at = now()
      where id = ${attempt.jobId}
      returning id, last_fencing_token
    )
    insert into attempts (id, job_id, attempt_number, state, fencing_token, created_at, updated_at)
    select ${newAttemptId}, id, ${attempt.attemptNumber + 1}, ${NEW_ATTEMPT_STATE}, last_fencing_token, now(), now()
    from bumped
    returning attempt_number`;
  return { nextAttemptId: newAttemptId, nextAttemptNumber: created?.attemptNumber };
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

// ---- sweeps ------------------------------------------------------------------------------
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

export interface PromotedOutput {
  id: string;
  uri: string;
  bytes: number;
  sha256: string;
  durationMs: number;
  codecs: string[];
  widthPx?: number;
  heightPx?: number;
}
