import type { Scenario } from "../scenario.ts";
import { authReport } from "./report.ts";
import { type AuthResult, benchAuth } from "./run.ts";

export const authScenario: Scenario<AuthResult> = {
  run: benchAuth,
  report: authReport,
  // Printed only: issue 12 sets no target for these.
  targets: () => [],
};
