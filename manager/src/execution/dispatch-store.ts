/**
 * The SQL of dispatch: the queue, the Workers with room, and the lease, each built and not sent
 * (the dispatcher sends the reads together, then the writes together). The lease applies the
 * table's lease-dispatched transition by itself (not through applyTrigger): it runs in the
 * scheduler's batch, on rows lockQueuedJobs chose in the transition's source states, and its
 * one effect, the lease command, carries what only dispatch knows (the Worker's instance, the
 * commit path and upload keys, the dispatch deadline).
 */
import type { ExecutionPlan, OutputCommit, StorageSettings } from "@tjm/protocol";
import { splitS3Uri } from "@tjm/storage";
import { type AttemptState, transitionNamed } from "../lifecycle/index.ts";
import { type PendingAnnouncement, pendingCommand } from "../outbox/index.ts";
import type { PendingQuery, Statement, TransactionSql } from "../platform/db.ts";

/** Where takeTurn leaves its answer for the pass's later reads: a setting local to the transaction. */
const TURN_SETTING = "tjm.scheduler_turn";

/**
 * Whether this pass has the turn (one replica schedules at a time): tries the advisory lock and
 * leaves the answer in the transaction for the reads sent behind it, which cannot wait for it.
 */
export function takeTurn(tx: TransactionSql, schema: string): PendingQuery<{ locked: boolean }[]> {
  return tx<{ locked: boolean }[]>`
    select set_config(${TURN_SETTING}, pg_try_advisory_xact_lock(hashtext(${`tjm.scheduler:${schema}`}))::text, true)
           = 'true' as locked`;
}

/**
 * True when takeTurn, earlier in this transaction, took the turn. Inside `(select …)` it is
 * evaluated once, before any row is read, so a pass without the turn locks nothing.
 */
function holdsTurn(tx: TransactionSql) {
  return tx`(select coalesce(current_setting(${TURN_SETTING}, true) = 'true', false))`;
}

const takesLeases = (tx: TransactionSql) =>
  tx`w.connectivity = 'ONLINE' and w.drain_requested_at is null and w.disabled_at is null`;
const capacity = (tx: TransactionSql) =>
  tx`least(w.host_capacity, coalesce(w.capacity_cap, w.host_capacity))`;
/** How many slots the attempts a Worker holds occupy. */
const load = (tx: TransactionSql) => tx`(select count(*)::int from attempts a
  where a.worker_id = w.id and a.state in ('DISPATCHED', 'RUNNING', 'UPLOADING'))`;

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
export function candidateWorkers(tx: TransactionSql): PendingQuery<CandidateWorkerRow[]> {
  return tx<CandidateWorkerRow[]>`
    select w.id as worker_id, w.instance_id, w.pool, w.protocol_version, w.capabilities,
           ${capacity(tx)} as capacity, ${load(tx)} as load
    from workers w
    where ${holdsTurn(tx)} and ${takesLeases(tx)}
    -- A drain, disable or connectivity change of one of these Workers waits for the leases
    -- written here, then sees (and fails or finishes) them.
    for share of w`;
}

const COMMANDS_SUBJECT = /^workers\.(.+)\.commands$/;

/**
 * The subjects of Workers with a command committed but not yet published (a cancel that freed a
 * slot, an undrain): their new leases must follow it through the relay, which publishes in id
 * order. A lease published at once could overtake it, and the Worker would refuse it (no free
 * slot, still draining). Sent after candidateWorkers, so anything committed before that read
 * saw the slot or the Worker free is visible here.
 */
export function unpublishedCommandSubjects(tx: TransactionSql): PendingQuery<{ subject: string }[]> {
  return tx<{ subject: string }[]>`
    select distinct subject from outbox where published_at is null and subject like 'workers.%.commands'`;
}

export function workerIdsOf(commandSubjects: readonly { subject: string }[]): Set<string> {
  return new Set(commandSubjects.flatMap((row) => COMMANDS_SUBJECT.exec(row.subject)?.[1] ?? []));
}

export interface QueuedJobRow {
  jobId: string;
  workerPool: string;
  requiredCapabilities: string[];
  protocolVersion: number;
  executionPlan: ExecutionPlan;
  currentAttemptId: string;
  attemptNumber: number;
  lastFencingToken: string;
  /** The transaction's now(): dispatch deadlines count from it. */
  transactionStarted: Date;
}

/**
 * Queued jobs whose current attempt waits for a Worker, by priority then age, of pools with a
 * free slot (jobs of a pool without Workers must not crowd out the rest); both rows locked, and
 * skipped when either is held: every other transaction locks the attempt before its job, so the
 * dispatch must never wait on an attempt whose job it holds. What the lease needs is read here,
 * so its writes need no answer before the commit.
 */
export function lockQueuedJobs(tx: TransactionSql, limit: number): PendingQuery<QueuedJobRow[]> {
  return tx<QueuedJobRow[]>`
    select j.id as job_id, j.worker_pool, j.required_capabilities, j.protocol_version, j.execution_plan,
           j.current_attempt_id, a.attempt_number, j.last_fencing_token, now() as transaction_started
    from jobs j join attempts a on a.id = j.current_attempt_id
    where ${holdsTurn(tx)} and j.state = 'QUEUED' and a.state = 'CREATED'
      and j.worker_pool in (select w.pool from workers w where ${takesLeases(tx)} and ${load(tx)} < ${capacity(tx)})
    order by j.priority desc, j.queued_at, j.id
    limit ${limit}
    for update of j, a skip locked`;
}

export interface LeaseSettings {
  storage: StorageSettings;
  commit: OutputCommit;
  dispatchTimeoutMs: number;
  protocolVersion: number;
}

const LEASE = transitionNamed("lease-dispatched");

/**
 * The lease of a job lockQueuedJobs chose, built and not yet sent: the job's next fencing
 * token, its CREATED attempt DISPATCHED to the Worker's current instance with that token and a
 * dispatch deadline, and the lease command in the outbox, whose row the dispatcher publishes once
 * committed. Both rows stay locked from lockQueuedJobs to the commit, so the values read there
 * still hold.
 */
export function lease(
  tx: TransactionSql,
  job: QueuedJobRow,
  worker: { workerId: string; instanceId: string },
  settings: LeaseSettings,
): { statements: Statement[]; command: PendingAnnouncement } {
  const fencingToken = (BigInt(job.lastFencingToken) + 1n).toString();
  const dispatchDeadline = new Date(job.transactionStarted.getTime() + settings.dispatchTimeoutMs);
  const plan = job.executionPlan;
  const command = pendingCommand(tx, worker.workerId, {
    type: "lease",
    protocolVersion: settings.protocolVersion as never,
    attemptId: job.currentAttemptId,
    fencingToken,
    jobId: job.jobId,
    attemptNumber: job.attemptNumber,
    plan,
    storage: settings.storage,
    workDirectory: plan.workspace?.rootDirectory ?? null,
    commit: settings.commit,
    // Multipart: at the destination itself, where only the Manager completes the upload.
    uploads: plan.outputs.map((output) => ({
      outputId: output.id,
      uri:
        settings.commit === "multipart"
          ? output.destinationUri
          : stagingUri(output.destinationUri, job.jobId, job.currentAttemptId, output.id),
    })),
    logsUri: logsUri(plan.outputs[0]?.destinationUri ?? "", job.jobId, job.attemptNumber),
    dispatchDeadline: dispatchDeadline.toISOString(),
  });
  return {
    statements: [
      tx`update jobs set last_fencing_token = ${fencingToken}, updated_at = now() where id = ${job.jobId}`,
      tx`update attempts set state = ${LEASE.to.attempt as AttemptState}, worker_id = ${worker.workerId},
           instance_id = ${worker.instanceId}, fencing_token = ${fencingToken}, dispatched_at = now(),
           dispatch_deadline = ${dispatchDeadline}, updated_at = now()
         where id = ${job.currentAttemptId}`,
      command.statement,
    ],
    command,
  };
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
