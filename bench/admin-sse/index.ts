import type { Scenario } from "../scenario.ts";
import { adminSseReport, adminSseTargets } from "./report.ts";
import { type AdminSseResult, benchAdminSse } from "./run.ts";

export const adminSseScenario: Scenario<AdminSseResult> = {
  run: benchAdminSse,
  report: adminSseReport,
  targets: adminSseTargets,
};
