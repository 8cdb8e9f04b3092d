import { positiveInteger } from "../shared/env.ts";

export interface DispatchSettings {
  /** Measured one-second jobs, run one at a time. */
  jobs: number;
}

export function readDispatchSettings(env: NodeJS.ProcessEnv): DispatchSettings {
  return { jobs: positiveInteger(env, "BENCH_DISPATCH_JOBS", "50") };
}
