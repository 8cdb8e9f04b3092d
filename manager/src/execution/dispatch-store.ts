/**
 * The SQL of dispatch: the queue, the Workers with room, and the lease. The lease applies the
 * table's lease-dispatched transition by itself (not through applyTrigger): it runs in the
 * scheduler's batch, on rows lockQueuedJobs chose in the transition's source states, and its
 * one effect, the lease command, carries what only dispatch knows (the Worker's instance, the
 * commit path and upload keys, the dispatch deadline).
 */
import type { ExecutionPlan, OutputCommit, StorageSettings } from "@tjm/protocol";
import { splitS3Uri } from "@tjm/storage";
import { type AttemptState, transitionNamed } from "../lifecycle/index.ts";
import { type OutboxRow, sendCommand } from "../outbox/index.ts";
import type { TransactionSql } from "../platform/db.ts";

export interface QueuedJobRow {
  jobId: string;
  workerPool: string;
  requiredCapabilities: string[];
  protocolVersion: number;
  outputs: { video?: { codec: string }; audio?: { codec: string } }[];
  currentAttemptId: string;
}

/**
 * Queued jobs whose current attempt waits for a Worker, by priority then age; both locked, and
 * skipped when either is held: every other transaction locks the attempt before its job, so the
 * dispatch must never wait on an attempt whose job it holds.
 */
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
    for update of j, a skip locked`;
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

const COMMANDS_SUBJECT = /^workers\.(.+)\.commands$/;

/**
 * Workers with a command committed but not yet published (a cancel that freed a slot, an
 * undrain): their new leases must follow it through the relay, which publishes in id order. A
 * lease published at once could overtake it, and the Worker would refuse it (no free slot,
 * still draining). Anything committed before this transaction saw the slot or the Worker free
 * is visible here.
 */
export async function workersWithUnpublishedCommands(tx: TransactionSql): Promise<Set<string>> {
  const rows = await tx<{ subject: string }[]>`
    select distinct subject from outbox where published_at is null and subject like 'workers.%.commands'`;
  return new Set(rows.flatMap((row) => COMMANDS_SUBJECT.exec(row.subject)?.[1] ?? []));
}

export interface LeaseSettings {
  storage: StorageSettings;
  commit: OutputCommit;
  dispatchTimeoutMs: number;
  protocolVersion: number;
}

const LEASE = transitionNamed("lease-dispatched");

/**
 * The lease (lockQueuedJobs chose a QUEUED job's CREATED attempt): the attempt goes
 * DISPATCHED to the Worker's current instance with the job's next fencing token and a
 * dispatch deadline, and the lease command goes to the outbox; its row is returned, for the
 * dispatcher to publish once committed.
 */
export async function dispatch(
  tx: TransactionSql,
  assignment: { jobId: string; attemptId: string; workerId: string; instanceId: string },
  settings: LeaseSettings,
): Promise<OutboxRow> {
  // One round trip for both: the attempt's update runs after the job's on this connection and
  // reads the token it just raised.
  const [[job], [attempt]] = await Promise.all([
    tx<{ lastFencingToken: string; executionPlan: ExecutionPlan }[]>`
      update jobs set last_fencing_token = last_fencing_token + 1, updated_at = now()
      where id = ${assignment.jobId}
      returning last_fencing_token, execution_plan`,
    tx<{ attemptNumber: number; dispatchDeadline: Date }[]>`
      update attempts set state = ${LEASE.to.attempt as AttemptState}, worker_id = ${assignment.workerId},
        instance_id = ${assignment.instanceId},
        fencing_token = (select last_fencing_token from jobs where id = ${assignment.jobId}),
        dispatched_at = now(), dispatch_deadline = now() + make_interval(secs => ${settings.dispatchTimeoutMs / 1000}),
        updated_at = now()
      where id = ${assignment.attemptId}
      returning attempt_number, dispatch_deadline`,
  ]);
  if (!job) throw new Error(`job ${assignment.jobId} vanished while being dispatched`);
  if (!attempt) throw new Error(`attempt ${assignment.attemptId} vanished while being dispatched`);
  const plan = job.executionPlan;
  return sendCommand(tx, assignment.workerId, {
    type: "lease",
    protocolVersion: settings.protocolVersion as never,
    attemptId: assignment.attemptId,
    fencingToken: job.lastFencingToken,
    jobId: assignment.jobId,
    attemptNumber: attempt.attemptNumber,
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
          : stagingUri(output.destinationUri, assignment.jobId, assignment.attemptId, output.id),
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
