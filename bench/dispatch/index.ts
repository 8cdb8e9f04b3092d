import type { Scenario } from "../scenario.ts";
import { dispatchReport, dispatchTargets } from "./report.ts";
import { benchDispatch, type DispatchResult } from "./run.ts";

export const dispatchScenario: Scenario<DispatchResult> = {
  run: benchDispatch,
  report: dispatchReport,
  targets: dispatchTargets,
};
