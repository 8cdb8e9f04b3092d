import type { Scenario } from "../scenario.ts";
import { listReport, listTargets } from "./report.ts";
import { benchList, type ListSizeResult } from "./run.ts";

export const listScenario: Scenario<ListSizeResult[]> = {
  run: benchList,
  report: listReport,
  targets: listTargets,
};
