/**
 * What the Manager's Prometheus metrics cost. (a) Submit throughput on two Managers alike but
 * for METRICS_ENABLED, on the submit scenario's load (shared/submit-load.ts): every round
 * measures both at each concurrency level, who goes first alternating per round, so the
 * background drift of a shared machine and the tables growing skew both alike. (b) GET
 * /metrics on its own Manager, empty and then with a million jobs stored (filled as the list
 * scenario fills them): scrape time and response size, and the stored-counts query alone.
 */
import { performance } from "node:perf_hooks";
import { readStoredCounts } from "../../manager/src/metrics/store.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import type { Attempt, BenchContext } from "../scenario.ts";
import { loadOptions } from "../settings.ts";
import { checkpoint } from "../shared/database.ts";
import { fillJobs } from "../shared/job-fill.ts";
import { type Contender, HttpClient, type LoadResult } from "../shared/load.ts";
import { createProject, freshManagerSchema, startManager } from "../shared/manager-process.ts";
import { type Spread, spread } from "../shared/stats.ts";
import { startSubmitManager } from "../shared/submit-load.ts";

const METRICS_PATH = "/metrics";
const SWITCHES = { on: "true", off: "false" } as const;
export type MetricsSwitch = keyof typeof SWITCHES;

export interface MetricsRound {
  onFirst: boolean;
  on: LoadResult | undefined;
  off: LoadResult | undefined;
}

export interface MetricsLevel {
  concurrency: number;
  rounds: MetricsRound[];
}

export interface ScrapeMeasurement {
  /** Jobs stored when it was scraped. */
  jobs: number;
  /** Seconds to store them (SQL fill, count compaction, VACUUM ANALYZE); 0 when empty. */
  fillSeconds: number;
  /** GET /metrics, request written to body read, one client, back to back. */
  scrapeMs: Spread;
  /** The last scrape's body. */
  bytes: number;
  /** Its sample lines (neither comments nor blank). */
  samples: number;
  /** The sum of its tjm_jobs samples: the stored count it reported (NaN when they were left out). */
  jobsReported: number;
  /** The sum of its tjm_queue_depth samples: the QUEUED jobs its query counted one by one. */
  queuedReported: number;
  /** readStoredCounts (the one query of a scrape) from the bench, as many times. */
  queryMs: Spread;
}

export interface MetricsResult {
  throughput: MetricsLevel[] | undefined;
  scrapes: ScrapeMeasurement[] | undefined;
}

async function measureThroughput(context: BenchContext, attempt: Attempt): Promise<MetricsLevel[]> {
  const managers: Partial<Record<MetricsSwitch, Contender>> = {};
  try {
    for (const key of ["on", "off"] as const)
      managers[key] = await startSubmitManager(context, {
        name: `metrics_${key}`,
        runtime: "node",
        settings: { METRICS_ENABLED: SWITCHES[key] },
      });
    const levels: MetricsLevel[] = context.settings.submit.concurrency.map((concurrency) => ({
      concurrency,
      rounds: [],
    }));
    for (let round = 1; round <= context.settings.metrics.rounds; round++) {
      const order = round % 2 === 1 ? (["on", "off"] as const) : (["off", "on"] as const);
      for (const level of levels) {
        const measured: MetricsRound = { onFirst: order[0] === "on", on: undefined, off: undefined };
        const options = loadOptions(context.settings, level.concurrency, context.settings.submit.seconds);
        for (const key of order) {
          const manager = managers[key] as Contender;
          await checkpoint(context.admin, context.log);
          measured[key] = await attempt(`metrics ${key} x${level.concurrency} round ${round}`, () =>
            manager.measure(options),
          );
          context.log(
            `metrics ${key} x${level.concurrency} round ${round}: ${measured[key]?.perSecond.toFixed(0) ?? "n/a"} jobs/s`,
          );
        }
        level.rounds.push(measured);
      }
    }
    return levels;
  } finally {
    for (const manager of Object.values(managers)) await manager.stop();
  }
}

const countSamples = (body: string) =>
  body.split("\n").filter((line) => line !== "" && !line.startsWith("#")).length;

/** The sum of one gauge's samples; NaN when the scrape left it out. */
function sumOf(body: string, series: "tjm_jobs" | "tjm_queue_depth"): number {
  const values = [...body.matchAll(new RegExp(`^${series}\\{[^}]*\\} (\\S+)$`, "gm"))].map((m) =>
    Number(m[1]),
  );
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0);
}

/** `scrapes` timed scrapes after one unmeasured, then the stored-counts query alone as often. */
async function timeScrapes(
  client: HttpClient,
  sql: Sql,
  scrapes: number,
): Promise<Omit<ScrapeMeasurement, "jobs" | "fillSeconds">> {
  let body = (await client.expect(200, "GET", METRICS_PATH)).body;
  const scrapeMs: number[] = [];
  for (let index = 0; index < scrapes; index++) {
    const started = performance.now();
    body = (await client.expect(200, "GET", METRICS_PATH)).body;
    scrapeMs.push(performance.now() - started);
  }
  await readStoredCounts(sql);
  const queryMs: number[] = [];
  for (let index = 0; index < scrapes; index++) {
    const started = performance.now();
    await readStoredCounts(sql);
    queryMs.push(performance.now() - started);
  }
  return {
    scrapeMs: spread(scrapeMs),
    bytes: Buffer.byteLength(body),
    samples: countSamples(body),
    jobsReported: sumOf(body, "tjm_jobs"),
    queuedReported: sumOf(body, "tjm_queue_depth"),
    queryMs: spread(queryMs),
  };
}

/** Scraped as Prometheus does by default: on the API port, no bearer token configured. */
async function measureScrapes(context: BenchContext): Promise<ScrapeMeasurement[]> {
  const settings = context.settings.metrics;
  const { schema, env } = await freshManagerSchema(context, "metrics_scrape");
  const project = await createProject(env, "bench", "bench");
  const sql = createSql({ url: context.databaseUrl, schema, poolMax: 2, applicationName: "tjm-bench-fill" });
  context.cleanup.defer("close the metrics fill connection", () => sql.end({ timeout: 5 }));
  const manager = await startManager("node", env, context.cleanup, { METRICS_ENABLED: "true" });
  const client = new HttpClient(manager.baseUrl, undefined, 1);
  const results: ScrapeMeasurement[] = [];
  try {
    for (const jobs of [0, settings.jobs]) {
      const fillStarted = performance.now();
      if (jobs > 0) await fillJobs(sql, project, { stored: 0, jobs, anchor: new Date() });
      const fillSeconds = jobs > 0 ? (performance.now() - fillStarted) / 1000 : 0;
      const measured = await timeScrapes(client, sql, settings.scrapes);
      context.log(
        `metrics scrape at ${jobs} jobs: p50 ${measured.scrapeMs.p50.toFixed(1)} ms, ${measured.bytes} bytes`,
      );
      results.push({ jobs, fillSeconds, ...measured });
    }
  } finally {
    client.close();
    await manager.stop();
  }
  return results;
}

export async function benchMetrics(context: BenchContext, attempt: Attempt): Promise<MetricsResult> {
  const throughput = await attempt("metrics submit on/off", () => measureThroughput(context, attempt));
  const scrapes = await attempt("metrics scrape", () => measureScrapes(context));
  return { throughput, scrapes };
}
