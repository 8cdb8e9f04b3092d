/**
 * Stored jobs for the scenarios that need many (list, metrics): set-based SQL, since minutes
 * through the API would become hours, through the same triggers the Manager relies on; then
 * the counts are folded and the planner statistics refreshed, as a long-running installation
 * would have them.
 */
import { samplePlan } from "@tjm/devstack/fixtures/plans";
import { PROTOCOL_VERSION } from "@tjm/protocol";
import { compactJobCounts } from "../../manager/src/jobs/store.ts";
import type { Sql } from "../../manager/src/platform/db.ts";

const FILL_CHUNK_ROWS = 100_000;

export interface FillProject {
  organizationId: string;
  projectId: string;
}

/**
 * Jobs `from`..`to` (1-based), one second apart going back from `anchor`, each with its
 * attempt 1. 85% COMPLETED, 7% FAILED, 3% CANCELLED, 3% QUEUED, 2% RUNNING; pools 70% cpu,
 * 20% nvidia, 7% intel, 3% amd.
 */
async function insertJobs(
  sql: Sql,
  project: FillProject,
  from: number,
  to: number,
  anchor: Date,
): Promise<void> {
  await sql`
    with drawn as (
      select i, gen_random_uuid() as job_id, gen_random_uuid() as attempt_id,
             random() as state_draw, random() as pool_draw
      from generate_series(${from}::int, ${to}::int) as i
    ), generated as materialized (
      select job_id, attempt_id,
             case when state_draw < 0.85 then 'COMPLETED' when state_draw < 0.92 then 'FAILED'
                  when state_draw < 0.95 then 'CANCELLED' when state_draw < 0.98 then 'QUEUED'
                  else 'RUNNING' end as state,
             case when pool_draw < 0.70 then 'cpu' when pool_draw < 0.90 then 'nvidia'
                  when pool_draw < 0.97 then 'intel' else 'amd' end as worker_pool,
             ${anchor}::timestamptz - i * interval '1 second' as created_at
      from drawn
    ), new_jobs as (
      insert into jobs (id, organization_id, project_id, state, priority, worker_pool, required_capabilities,
                        execution_plan, protocol_version, current_attempt_id, last_fencing_token,
                        queued_at, started_at, completed_at, created_at, updated_at, deadline_at)
      select job_id, ${project.organizationId}, ${project.projectId}, state, 0, worker_pool,
             case worker_pool when 'cpu' then '{libx264}' when 'nvidia' then '{h264_nvenc}'
                              when 'intel' then '{h264_qsv}' else '{h264_amf}' end::text[],
             ${sql.json(samplePlan())}, ${PROTOCOL_VERSION}, attempt_id, 1,
             created_at,
             case when state in ('RUNNING', 'COMPLETED', 'FAILED') then created_at + interval '5 seconds' end,
             case when state in ('COMPLETED', 'FAILED', 'CANCELLED') then created_at + interval '2 minutes' end,
             created_at, created_at + interval '2 minutes',
             -- After the run: the Manager's deadline sweep must leave the stored jobs as they are.
             ${anchor}::timestamptz + interval '72 hours'
      from generated
    )
    insert into attempts (id, job_id, attempt_number, state, fencing_token, created_at, updated_at)
    select attempt_id, job_id, 1,
           case state when 'COMPLETED' then 'SUCCEEDED' when 'QUEUED' then 'CREATED' else state end,
           1, created_at, created_at + interval '2 minutes'
    from generated`;
}

/**
 * Adds jobs `stored + 1`..`jobs` (in chunks, so no statement holds a million rows at once),
 * then folds the counts and runs VACUUM ANALYZE. `anchor` is the same for every call of one
 * table, so the jobs stay one second apart.
 */
export async function fillJobs(
  sql: Sql,
  project: FillProject,
  range: { stored: number; jobs: number; anchor: Date },
): Promise<void> {
  for (let from = range.stored + 1; from <= range.jobs; from += FILL_CHUNK_ROWS)
    await insertJobs(sql, project, from, Math.min(range.jobs, from + FILL_CHUNK_ROWS - 1), range.anchor);
  await compactJobCounts(sql);
  await sql`vacuum (analyze) jobs, attempts, job_state_counts, job_state_count_deltas`;
}
