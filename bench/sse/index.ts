import type { Scenario } from "../scenario.ts";
import { sseReport, sseTargets } from "./report.ts";
import { benchSse, type SseResult } from "./run.ts";

export const sseScenario: Scenario<SseResult> = {
  run: benchSse,
  report: sseReport,
  targets: sseTargets,
};
