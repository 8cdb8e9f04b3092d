import type { ExecutionPlan, OutputResult } from "@tjm/protocol";
import { type AttemptState, JOB_STATES, type JobState, transitionNamed } from "../lifecycle/index.ts";
import { outboxInsert } from "../outbox/index.ts";
import type { PendingQuery, Sql, TransactionSql } from "../platform/db.ts";
import type { WorkerPool } from "./plan.ts";

export interface JobRow {
  id: string;
  organizationId: string;
  projectId: string;
  state: JobState;
  priority: number;
  workerPool: WorkerPool;
  requiredCapabilities: string[];
  protocolVersion: number;
  currentAttemptId: string;
  currentAttemptState: AttemptState;
  queuedAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface JobDetailRow extends JobRow {
  executionPlan: ExecutionPlan;
}

/** An output as the attempt's completed report described it (where it was uploaded in `uri`). */
export type ReportedOutput = OutputResult;

export interface AttemptRow {
  id: string;
  attemptNumber: number;
  state: AttemptState;
  workerId: string | null;
  acceptedAt: Date | null;
  endedAt: Date | null;
  /**
   * The completed report's outputs, once the Manager accepted the completion, and the manifest
   * it wrote once it promoted them (plans with a manifestUri).
   */
  result: { outputs: ReportedOutput[]; logsUri: string; manifest?: Record<string, unknown> } | null;
  failureCode: string | null;
  failureMessage: string | null;
  logsUri: string | null;
  encodingRecoveryCount: number;
  uploadRecoveryCount: number;
  uploadPausedAt: Date | null;
  uploadPauseExpiresAt: Date | null;
  uploadResumeRequestedAt: Date | null;
  inputWaitSince: Date | null;
  inputWaitError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewJob {
  id: string;
  attemptId: string;
  projectId: string;
  priority: number;
  workerPool: WorkerPool;
  requiredCapabilities: string[];
  executionPlan: ExecutionPlan;
  protocolVersion: number;
  deadlineHours: number;
}

const jobColumns = (sql: Sql | TransactionSql) => sql`
  j.id, j.organization_id, j.project_id, j.state, j.priority, j.worker_pool, j.required_capabilities,
  j.protocol_version, j.current_attempt_id, j.queued_at, j.started_at, j.completed_at, j.created_at, j.updated_at`;

const SUBMISSION = transitionNamed("job-submitted");

/**
 * Job, attempt 1 (fencing token 1) and the job.created announcement in one statement, so
 * all-or-nothing; the states are the job-submitted transition's. Built and not yet sent: the
 * caller sends it alone or in a scheduling pass's transaction. No row when the project does
 * not exist.
 */
export function insertJob(sql: Sql | TransactionSql, job: NewJob): PendingQuery<JobRow[]> {
  return sql<JobRow[]>`
    with project as (
      select organization_id from projects where id = ${job.projectId}
    ), job as (
      insert into jobs (id, organization_id, project_id, state, priority, worker_pool, required_capabilities,
                        execution_plan, protocol_version, current_attempt_id, last_fencing_token,
                        queued_at, created_at, updated_at, deadline_at)
      select ${job.id}, organization_id, ${job.projectId}, ${SUBMISSION.to.job as JobState}, ${job.priority}, ${job.workerPool},
             ${job.requiredCapabilities}::text[], ${sql.json(job.executionPlan as never)}, ${job.protocolVersion},
             ${job.attemptId}, 1, now(), now(), now(), now() + make_interval(secs => ${job.deadlineHours * 3600})
      from project
      returning *
    ), attempt as (
      insert into attempts (id, job_id, attempt_number, state, fencing_token, created_at, updated_at)
      select ${job.attemptId}, id, 1, ${SUBMISSION.to.attempt as AttemptState}, 1, created_at, created_at from job
      returning state
    ), announcement as (${outboxInsert(sql, {
      kind: "job.created",
      payload: sql`jsonb_build_object('jobId', id, 'organizationId', organization_id, 'projectId', project_id,
                                      'state', state, 'workerPool', worker_pool, 'priority', priority,
                                      'attemptId', current_attempt_id, 'occurredAt', created_at)`,
      from: sql`job`,
    })})
    select j.id, j.organization_id, j.project_id, j.state, j.priority, j.worker_pool, j.required_capabilities,
           j.protocol_version, j.current_attempt_id, attempt.state as current_attempt_state, j.queued_at,
           j.started_at, j.completed_at, j.created_at, j.updated_at
    from job j, attempt`;
}

/**
 * The job and its attempts, read in two statements: call it in a transaction that sees one
 * snapshot (repeatable read) or holds the job's row lock.
 */
export async function findJobDetail(
  sql: Sql | TransactionSql,
  jobId: string,
): Promise<{ job: JobDetailRow; attempts: AttemptRow[] } | undefined> {
  const [job] = await sql<JobDetailRow[]>`
    select ${jobColumns(sql)}, j.execution_plan, a.state as current_attempt_state
    from jobs j join attempts a on a.id = j.current_attempt_id
    where j.id = ${jobId}`;
  if (!job) return undefined;
  const attempts = await sql<AttemptRow[]>`
    select id, attempt_number, state, worker_id, accepted_at, ended_at, result, failure_code,
           failure_message, logs_uri, encoding_recovery_count, upload_recovery_count, upload_paused_at,
           upload_pause_expires_at, upload_resume_requested_at, input_wait_since, input_wait_error,
           created_at, updated_at
    from attempts where job_id = ${jobId} order by attempt_number`;
  return { job, attempts };
}

/**
 * Where an attempt's log is (null until the Worker uploaded it) and whether the attempt ended;
 * undefined when the job has no such attempt.
 */
export async function findAttemptLog(
  sql: Sql,
  jobId: string,
  attemptId: string,
): Promise<{ logsUri: string | null; endedAt: Date | null } | undefined> {
  const [row] = await sql<{ logsUri: string | null; endedAt: Date | null }[]>`
    select logs_uri, ended_at from attempts where id = ${attemptId} and job_id = ${jobId}`;
  return row;
}

export interface JobFilter {
  states: JobState[] | undefined;
  workerPool: WorkerPool | undefined;
}

/**
 * Newest first. With a state filter the query is a union of one index range per state,
 * each cut at offset+limit, so a page costs the same with a thousand jobs or a million.
 */
export async function listJobs(
  sql: Sql,
  filter: JobFilter,
  limit: number,
  offset: number,
): Promise<JobRow[]> {
  const pool = filter.workerPool;
  const poolCondition = pool ? sql`and j.worker_pool = ${pool}` : sql``;
  const select = (state: JobState | undefined) => sql`
    select ${jobColumns(sql)}
    from jobs j
    where true ${state ? sql`and j.state = ${state}` : sql``} ${poolCondition}
    order by j.created_at desc, j.id desc
    limit ${limit + offset}`;
  const states = filter.states ?? (pool ? [...JOB_STATES] : undefined);
  const candidates = states
    ? states.map((state) => sql`(${select(state)})`).reduce((union, part) => sql`${union} union all ${part}`)
    : sql`(${select(undefined)})`;
  return sql<JobRow[]>`
    select c.*, a.state as current_attempt_state
    from (${candidates}) c join attempts a on a.id = c.current_attempt_id
    order by c.created_at desc, c.id desc
    limit ${limit} offset ${offset}`;
}

/** Exact count from the folded per-state counters plus the deltas not folded yet. */
export async function countJobs(sql: Sql, filter: JobFilter): Promise<number> {
  const conditions = sql`
    where true
    ${filter.states ? sql`and state = any(${filter.states}::text[])` : sql``}
    ${filter.workerPool ? sql`and worker_pool = ${filter.workerPool}` : sql``}`;
  const [row] = await sql<{ total: string }[]>`
    select coalesce(sum(n), 0)::bigint as total from (
      select count as n from job_state_counts ${conditions}
      union all
      select delta as n from job_state_count_deltas ${conditions}
    ) parts`;
  return Number(row?.total ?? 0);
}

/** Folds pending count deltas into job_state_counts; safe to run from several replicas at once. */
export async function compactJobCounts(sql: Sql): Promise<void> {
  await sql`
    with moved as (
      delete from job_state_count_deltas returning state, worker_pool, delta
    ), sums as (
      select state, worker_pool, sum(delta) as delta from moved group by state, worker_pool
    )
    insert into job_state_counts (state, worker_pool, count)
    select state, worker_pool, delta from sums
    on conflict (state, worker_pool) do update set count = job_state_counts.count + excluded.count`;
}
