import { positiveInteger } from "../shared/env.ts";

export interface ScaleOutSettings {
  /** One-and-two pairs per concurrency level, who goes first alternating per round. */
  rounds: number;
}

/** The load reuses the submit knobs (BENCH_CONCURRENCY, BENCH_SECONDS). */
export function readScaleOutSettings(env: NodeJS.ProcessEnv): ScaleOutSettings {
  return { rounds: positiveInteger(env, "BENCH_SCALE_OUT_ROUNDS", "2") };
}
