import type { Scenario } from "../scenario.ts";
import { metricsReport, metricsTargets } from "./report.ts";
import { benchMetrics, type MetricsResult } from "./run.ts";

export const metricsScenario: Scenario<MetricsResult> = {
  run: benchMetrics,
  report: metricsReport,
  targets: metricsTargets,
};
