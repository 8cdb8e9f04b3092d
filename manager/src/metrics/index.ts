/** The metrics room: the series list, the Manager's instruments and its /metrics endpoint. */
export {
  createManagerMetrics,
  type ManagerMetrics,
  type MetricsEndpoint,
  type MetricsSettings,
} from "./manager-metrics.ts";
export type { PublishedRow } from "./outcomes.ts";
export { metricsApp, registerMetrics } from "./route.ts";
export { MANAGER_SERIES, type ManagerSeriesName, type SeriesSpec, type SeriesType } from "./series.ts";
