/** The bench's knobs (environment): the shared ones here, each scenario's in its folder. */
import { type AdminSseSettings, readAdminSseSettings } from "./admin-sse/settings.ts";
import { type AuthSettings, readAuthSettings } from "./auth/settings.ts";
import { type DispatchSettings, readDispatchSettings } from "./dispatch/settings.ts";
import { type HeartbeatSettings, readHeartbeatSettings } from "./heartbeats/settings.ts";
import { type ListSettings, readListSettings } from "./list/settings.ts";
import { type MetricsSettings, readMetricsSettings } from "./metrics/settings.ts";
import { type OverheadSettings, readOverheadSettings } from "./overhead/settings.ts";
import { type PortalSettings, readPortalSettings } from "./portal/settings.ts";
import { readScaleOutSettings, type ScaleOutSettings } from "./scale-out/settings.ts";
import { positiveNumber } from "./shared/env.ts";
import type { LoadOptions } from "./shared/load.ts";
import { readSseSettings, type SseSettings } from "./sse/settings.ts";
import { readSubmitSettings, type SubmitSettings } from "./submit/settings.ts";
import { readTinyJobsSettings, type TinyJobsSettings } from "./tiny-jobs/settings.ts";
import { readUploadSettings, type UploadSettings } from "./upload/settings.ts";

export const SCENARIOS = [
  "submit",
  "list",
  "relay",
  "heartbeats",
  "sse",
  "overhead",
  "dispatch",
  "tiny-jobs",
  "upload",
  "argon2",
  "auth",
  "admin-sse",
  "metrics",
  "scale-out",
  "delivery",
  "portal",
  "logout-all",
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface Settings {
  /** Which scenarios run, in the order of SCENARIOS. */
  scenarios: ScenarioName[];
  /** Unmeasured seconds before each throughput level, each list filter and the heartbeat window. */
  warmupSeconds: number;
  submit: SubmitSettings;
  list: ListSettings;
  heartbeats: HeartbeatSettings;
  sse: SseSettings;
  overhead: OverheadSettings;
  dispatch: DispatchSettings;
  tinyJobs: TinyJobsSettings;
  upload: UploadSettings;
  auth: AuthSettings;
  adminSse: AdminSseSettings;
  metrics: MetricsSettings;
  scaleOut: ScaleOutSettings;
  portal: PortalSettings;
}

function readScenarios(env: NodeJS.ProcessEnv): ScenarioName[] {
  const named = (env.BENCH_SCENARIOS || SCENARIOS.join(",")).split(",").map((part) => part.trim());
  const unknown = named.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0 || named.length === 0)
    throw new Error(`BENCH_SCENARIOS may name ${SCENARIOS.join(", ")}, not "${unknown.join(", ")}"`);
  return SCENARIOS.filter((name) => named.includes(name));
}

/** Every knob, checked before anything starts, also those of the scenarios that do not run. */
export function readSettings(env: NodeJS.ProcessEnv): Settings {
  return {
    scenarios: readScenarios(env),
    warmupSeconds: positiveNumber(env, "BENCH_WARMUP_SECONDS", "2"),
    submit: readSubmitSettings(env),
    list: readListSettings(env),
    heartbeats: readHeartbeatSettings(env),
    sse: readSseSettings(env),
    overhead: readOverheadSettings(env),
    dispatch: readDispatchSettings(env),
    tinyJobs: readTinyJobsSettings(env),
    upload: readUploadSettings(env),
    auth: readAuthSettings(env),
    adminSse: readAdminSseSettings(env),
    metrics: readMetricsSettings(env),
    scaleOut: readScaleOutSettings(env),
    portal: readPortalSettings(env),
  };
}

/** A closed loop of `concurrency` callers: the warm-up, then `seconds` measured. */
export function loadOptions(settings: Settings, concurrency: number, seconds: number): LoadOptions {
  return { concurrency, warmupMs: settings.warmupSeconds * 1000, durationMs: seconds * 1000 };
}
