import { positiveInteger } from "../shared/env.ts";

export interface MetricsSettings {
  /** On/off pairs per concurrency level, who goes first alternating per round. */
  rounds: number;
  /** Jobs stored for the scrape timing. */
  jobs: number;
  /** Timed scrapes per size (after one unmeasured). */
  scrapes: number;
}

/** The throughput comparison reuses the submit knobs (BENCH_CONCURRENCY, BENCH_SECONDS). */
export function readMetricsSettings(env: NodeJS.ProcessEnv): MetricsSettings {
  return {
    rounds: positiveInteger(env, "BENCH_METRICS_ROUNDS", "3"),
    jobs: positiveInteger(env, "BENCH_METRICS_JOBS", "1000000"),
    scrapes: positiveInteger(env, "BENCH_METRICS_SCRAPES", "200"),
  };
}
