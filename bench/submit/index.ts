import type { Scenario } from "../scenario.ts";
import { submitReport, submitTargets } from "./report.ts";
import { benchSubmit, type SubmitResult } from "./run.ts";

export const submitScenario: Scenario<SubmitResult> = {
  run: benchSubmit,
  report: submitReport,
  targets: submitTargets,
};
