import type { Scenario } from "../scenario.ts";
import { overheadReport, overheadTargets } from "./report.ts";
import { benchOverhead, type OverheadResult } from "./run.ts";

export const overheadScenario: Scenario<OverheadResult> = {
  run: benchOverhead,
  report: overheadReport,
  targets: overheadTargets,
};
