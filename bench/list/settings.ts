import { positiveNumber, positiveNumbers } from "../shared/env.ts";

export interface ListSettings {
  /** Jobs stored for the measurements, ascending (filled cumulatively). */
  sizes: number[];
  /** Measured seconds per list filter (one client, so latency is not queueing). */
  seconds: number;
}

export function readListSettings(env: NodeJS.ProcessEnv): ListSettings {
  return {
    sizes: positiveNumbers(env, "BENCH_LIST_SIZES", "100000,1000000")
      .map(Math.round)
      .sort((a, b) => a - b),
    seconds: positiveNumber(env, "BENCH_LIST_SECONDS", "3"),
  };
}
