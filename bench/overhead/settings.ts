import { positiveInteger } from "../shared/env.ts";

export interface OverheadSettings {
  /** Pairs of runs (plain ffmpeg, TJM job); medians are reported. */
  runs: number;
  /** Length of the 720p clip. */
  clipSeconds: number;
}

export function readOverheadSettings(env: NodeJS.ProcessEnv): OverheadSettings {
  return {
    runs: positiveInteger(env, "BENCH_OVERHEAD_RUNS", "3"),
    clipSeconds: positiveInteger(env, "BENCH_OVERHEAD_SECONDS", "60"),
  };
}
