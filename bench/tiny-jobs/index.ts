import type { Scenario } from "../scenario.ts";
import { tinyJobsReport, tinyJobsTargets } from "./report.ts";
import { benchTinyJobs, type TinyJobsResult } from "./run.ts";

export const tinyJobsScenario: Scenario<TinyJobsResult> = {
  run: benchTinyJobs,
  report: tinyJobsReport,
  targets: tinyJobsTargets,
};
