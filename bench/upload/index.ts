import type { Scenario } from "../scenario.ts";
import { uploadReport, uploadTargets } from "./report.ts";
import { benchUpload, type UploadResult } from "./run.ts";

export const uploadScenario: Scenario<UploadResult> = {
  run: benchUpload,
  report: uploadReport,
  targets: uploadTargets,
};
