import { positiveNumber } from "../shared/env.ts";

export interface PortalSettings {
  /** Measured seconds of GET /api/v1/me (one caller, after the warm-up). */
  seconds: number;
}

export function readPortalSettings(env: NodeJS.ProcessEnv): PortalSettings {
  return { seconds: positiveNumber(env, "BENCH_PORTAL_SECONDS", "10") };
}
