/**
 * GET /api/v1/operations/jobs latency with 100k and 1M jobs stored, filled with set-based SQL
 * (shared/job-fill.ts) through the same triggers the Manager relies on.
 */

import postgres from "postgres";
import { type JobFilter, listJobs } from "../../manager/src/jobs/store.ts";
import { createSql } from "../../manager/src/platform/db.ts";
import type { BenchContext } from "../scenario.ts";
import { loadOptions } from "../settings.ts";
import { JOBS_PATH } from "../shared/api.ts";
import { fillJobs } from "../shared/job-fill.ts";
import { closedLoop, HttpClient, type LoadResult } from "../shared/load.ts";
import { createProject, freshManagerSchema, startManager } from "../shared/manager-process.ts";

export const PAGE = { limit: 50, offset: 0 };

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
      await fillJobs(sql, project, { stored, jobs, anchor });
      stored = jobs;
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
