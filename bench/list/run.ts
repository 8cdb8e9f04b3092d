/**
 * GET /api/v1/operations/jobs latency with 100k and 1M jobs stored. The table is filled with
 * set-based SQL (minutes through the API would become hours), through the same triggers
 * the Manager relies on, then the counts are folded and the planner statistics refreshed.
 */

import { samplePlan } from "@tjm/devstack/fixtures/plans";
import { PROTOCOL_VERSION } from "@tjm/protocol";
import postgres from "postgres";
import { compactJobCounts, type JobFilter, listJobs } from "../../manager/src/jobs/store.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import type { BenchContext } from "../scenario.ts";
import { loadOptions } from "../settings.ts";
import { JOBS_PATH } from "../shared/api.ts";
import { closedLoop, HttpClient, type LoadResult } from "../shared/load.ts";
import { createProject, freshManagerSchema, startManager } from "../shared/manager-process.ts";

export const PAGE = { limit: 50, offset: 0 };
const FILL_CHUNK_ROWS = 100_000;

interface ListFilter {
  label: string;
  filter: JobFilter;
}

const FILTERS: ListFilter[] = [
  { label: "state=QUEUED", filter: { states: ["QUEUED"], workerPool: undefined } },
  { label: "state=COMPLETED", filter: { states: ["COMPLETED"], workerPool: undefined } },
  { label: "states=QUEUED,RUNNING", filter: { states: ["QUEUED", "RUNNING"], workerPool: undefined } },
  { label: "workerPool=nvidia", filter: { states: undefined, workerPool: "nvidia" } },
  { label: "workerPool=cpu&state=FAILED", filter: { states: ["FAILED"], workerPool: "cpu" } },
];

/** The filter whose full plan is printed: a single state, the list route's commonest use. */
const EXPLAINED_FILTER = FILTERS[0] as ListFilter;

export interface ListMeasurement {
  label: string;
  /** `total` of the first answer: how many jobs match the filter. */
  matching: number;
  result: LoadResult;
}

export interface PlanSummary {
  label: string;
  indexes: string[];
  executionMs: number;
}

export interface ListSizeResult {
  jobs: number;
  fillSeconds: number;
  measurements: ListMeasurement[];
  plans: PlanSummary[];
  /** EXPLAIN (ANALYZE, BUFFERS) of EXPLAINED_FILTER's page query. */
  explained: { label: string; plan: string };
}

/**
 * Jobs `from`..`to` (1-based), one second apart going back from `anchor`, each with its
 * attempt 1. 85% COMPLETED, 7% FAILED, 3% CANCELLED, 3% QUEUED, 2% RUNNING; pools 70% cpu,
 * 20% nvidia, 7% intel, 3% amd.
 */
async function insertJobs(
  sql: Sql,
  project: { organizationId: string; projectId: string },
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

function listPath(filter: JobFilter): string {
  const query = new URLSearchParams();
  if (filter.states?.length === 1) query.set("state", filter.states[0] as string);
  else if (filter.states) query.set("states", filter.states.join(","));
  if (filter.workerPool) query.set("workerPool", filter.workerPool);
  query.set("limit", String(PAGE.limit));
  query.set("offset", String(PAGE.offset));
  return `${JOBS_PATH}?${query}`;
}

/**
 * EXPLAIN ANALYZE of the exact statement the Manager's listJobs sends: it is run once on a
 * client that records its SQL text and parameters, then explained with them.
 */
async function explainListQuery(
  databaseUrl: string,
  schema: string,
  filter: JobFilter,
): Promise<{ plan: string; indexes: string[]; executionMs: number }> {
  let statement: { query: string; parameters: unknown[] } | undefined;
  const sql = postgres(databaseUrl, {
    max: 1,
    onnotice: () => {},
    connection: { search_path: schema, application_name: "tjm-bench-explain" },
    debug: (_connection, query, parameters) => {
      statement = { query, parameters };
    },
  });
  try {
    await listJobs(sql, filter, PAGE.limit, PAGE.offset);
    if (!statement) throw new Error("listJobs sent no statement");
    const rows = await sql.unsafe<{ "QUERY PLAN": string }[]>(
      `explain (analyze, buffers) ${statement.query}`,
      statement.parameters as postgres.ParameterOrJSON<never>[],
    );
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    const indexes = [
      ...new Set(
        [...plan.matchAll(/Index (?:Only )?Scan (?:Backward )?using (\S+)/g)].map((m) => m[1] as string),
      ),
    ];
    const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? Number.NaN);
    return { plan, indexes, executionMs };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export async function benchList(context: BenchContext): Promise<ListSizeResult[]> {
  const { schema, env } = await freshManagerSchema(context, "list");
  const project = await createProject(env, "bench", "bench");
  const sql = createSql({ url: context.databaseUrl, schema, poolMax: 2, applicationName: "tjm-bench-fill" });
  context.cleanup.defer("close the fill connection", () => sql.end({ timeout: 5 }));
  const manager = await startManager("node", env, context.cleanup);
  const client = new HttpClient(manager.baseUrl, context.token, 1);
  const anchor = new Date();
  const results: ListSizeResult[] = [];
  let stored = 0;
  try {
    for (const jobs of context.settings.list.sizes) {
      const fillStarted = performance.now();
      while (stored < jobs) {
        const to = Math.min(jobs, stored + FILL_CHUNK_ROWS);
        await insertJobs(sql, project, stored + 1, to, anchor);
        stored = to;
      }
      await compactJobCounts(sql);
      await sql`vacuum (analyze) jobs, attempts, job_state_counts, job_state_count_deltas`;
      const fillSeconds = (performance.now() - fillStarted) / 1000;
      context.log(
        `list: ${jobs} jobs stored (fill, compaction and VACUUM ANALYZE took ${fillSeconds.toFixed(1)} s)`,
      );

      const plans: PlanSummary[] = [];
      let explained = { label: "", plan: "" };
      for (const { label, filter } of FILTERS) {
        const { plan, indexes, executionMs } = await explainListQuery(context.databaseUrl, schema, filter);
        plans.push({ label, indexes, executionMs });
        if (label === EXPLAINED_FILTER.label) explained = { label, plan };
      }

      const measurements: ListMeasurement[] = [];
      for (const { label, filter } of FILTERS) {
        const path = listPath(filter);
        const first = await client.expect(200, "GET", path);
        const matching = (JSON.parse(first.body) as { total: number }).total;
        const result = await closedLoop(
          () => client.expect(200, "GET", path),
          loadOptions(context.settings, 1, context.settings.list.seconds),
        );
        context.log(
          `list ${jobs} ${label}: p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms`,
        );
        measurements.push({ label, matching, result });
      }
      results.push({ jobs, fillSeconds, measurements, plans, explained });
    }
  } finally {
    client.close();
    await manager.stop();
  }
  return results;
}
