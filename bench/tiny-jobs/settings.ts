import { positiveInteger } from "../shared/env.ts";

export interface TinyJobsSettings {
  /** One-second jobs, submitted at once. */
  jobs: number;
  /** Worker agents, WORKER_CAPACITY=1 each. */
  workers: number;
}

export function readTinyJobsSettings(env: NodeJS.ProcessEnv): TinyJobsSettings {
  return {
    jobs: positiveInteger(env, "BENCH_TINY_JOBS", "1000"),
    workers: positiveInteger(env, "BENCH_TINY_WORKERS", "4"),
  };
}
