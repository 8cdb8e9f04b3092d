import { positiveInteger, positiveNumber, positiveNumbers } from "../shared/env.ts";

export interface SseSettings {
  /** Concurrent subscribers per level, one level after the other on the same Manager. */
  subscribers: number[];
  /** Jobs submitted per level, each announcing one event. */
  jobs: number;
  jobsPerSecond: number;
  /** Subscriber sockets per child process. */
  perProcess: number;
}

export function readSseSettings(env: NodeJS.ProcessEnv): SseSettings {
  return {
    subscribers: positiveNumbers(env, "BENCH_SSE_SUBSCRIBERS", "1000,10000").map(Math.round),
    jobs: positiveInteger(env, "BENCH_SSE_JOBS", "20"),
    jobsPerSecond: positiveNumber(env, "BENCH_SSE_JOBS_PER_SECOND", "5"),
    perProcess: positiveInteger(env, "BENCH_SSE_PER_PROCESS", "2500"),
  };
}
