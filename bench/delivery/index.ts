import type { Scenario } from "../scenario.ts";
import { deliveryReport, deliveryTargets } from "./report.ts";
import { benchDelivery, type DeliveryResult } from "./run.ts";

export const deliveryScenario: Scenario<DeliveryResult> = {
  run: benchDelivery,
  report: deliveryReport,
  targets: deliveryTargets,
};
