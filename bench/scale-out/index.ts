import type { Scenario } from "../scenario.ts";
import { scaleOutReport, scaleOutTargets } from "./report.ts";
import { benchScaleOut, type ScaleOutResult } from "./run.ts";

export const scaleOutScenario: Scenario<ScaleOutResult> = {
  run: benchScaleOut,
  report: scaleOutReport,
  targets: scaleOutTargets,
};
