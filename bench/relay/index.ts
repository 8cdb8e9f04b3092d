import type { Scenario } from "../scenario.ts";
import { relayReport, relayTargets } from "./report.ts";
import { benchRelay, type RelayResult } from "./run.ts";

export const relayScenario: Scenario<RelayResult> = {
  run: benchRelay,
  report: relayReport,
  targets: relayTargets,
};
