import { positiveInteger, positiveNumber, positiveNumbers } from "../shared/env.ts";

export interface SseSettings {
  /** Concurrent subscribers per level, one level after the other on the same Manager. */
  subscribers: number[];
  /** Jobs submitted per level, each announcing one event. */
  jobs: number;
  jobsPerSecond: number;
  /** Subscriber sockets per child process. */
  perProcess: number;
  /** Subscribers still read in each level's second round (all are written to). */
  sampledReaders: number;
  /** Where the Manager writes a V8 CPU profile (`node --cpu-prof`) when it stops; none when unset. */
  cpuProfileDir: string | undefined;
}

export function readSseSettings(env: NodeJS.ProcessEnv): SseSettings {
  return {
    subscribers: positiveNumbers(env, "BENCH_SSE_SUBSCRIBERS", "1000,10000").map(Math.round),
    jobs: positiveInteger(env, "BENCH_SSE_JOBS", "20"),
    jobsPerSecond: positiveNumber(env, "BENCH_SSE_JOBS_PER_SECOND", "5"),
    perProcess: positiveInteger(env, "BENCH_SSE_PER_PROCESS", "2500"),
    sampledReaders: positiveInteger(env, "BENCH_SSE_SAMPLED_READERS", "100"),
    cpuProfileDir: env.BENCH_SSE_CPU_PROFILE_DIR || undefined,
  };
}
