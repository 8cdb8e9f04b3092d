import type { Scenario } from "../scenario.ts";
import { portalReport, portalTargets } from "./report.ts";
import { benchPortal, type PortalResult } from "./run.ts";

export const portalScenario: Scenario<PortalResult> = {
  run: benchPortal,
  report: portalReport,
  targets: portalTargets,
};
