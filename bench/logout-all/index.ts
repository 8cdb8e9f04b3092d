import type { Scenario } from "../scenario.ts";
import { logoutAllReport, logoutAllTargets } from "./report.ts";
import { benchLogoutAll, type LogoutAllResult } from "./run.ts";

export const logoutAllScenario: Scenario<LogoutAllResult> = {
  run: benchLogoutAll,
  report: logoutAllReport,
  targets: logoutAllTargets,
};
