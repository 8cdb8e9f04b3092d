import type { Scenario } from "../scenario.ts";
import { heartbeatReport, heartbeatTargets } from "./report.ts";
import { benchHeartbeats, type HeartbeatResult } from "./run.ts";

export const heartbeatsScenario: Scenario<HeartbeatResult> = {
  run: benchHeartbeats,
  report: heartbeatReport,
  targets: heartbeatTargets,
};
