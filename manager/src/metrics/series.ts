/**
 * Every series the Manager exports besides prom-client's process defaults: the one list the
 * docs/observability.md, the dashboard, the alert rules and the tests are checked against (issue 14). Labels
 * take values from the fixed sets below only, never an id.
 */
import { WORKER_POOLS } from "@tjm/protocol";
import { FAILURE_CODES } from "../lifecycle/failures.ts";

export type SeriesType = "counter" | "gauge" | "histogram";

export interface SeriesSpec {
  type: SeriesType;
  help: string;
  labels: readonly string[];
}

export const MANAGER_SERIES = {
  tjm_jobs: {
    type: "gauge",
    help: "Jobs stored, by state (every state, 0 included)",
    labels: ["state"],
  },
  tjm_queue_depth: {
    type: "gauge",
    help: "QUEUED jobs by pool and priority band: high (priority > 0), normal (0), low (< 0)",
    labels: ["pool", "priority_band"],
  },
  tjm_job_submit_duration_seconds: {
    type: "histogram",
    help: "POST /api/v1/operations/jobs, request in to response, every answer (refusals included)",
    labels: [],
  },
  tjm_dispatch_latency_seconds: {
    type: "histogram",
    help: "From an attempt becoming dispatchable (queued) to its lease published to the Worker",
    labels: ["pool"],
  },
  tjm_attempt_outcomes_total: {
    type: "counter",
    help: "Attempts ended, by outcome and failure code (none unless failed; OTHER for a code TJM does not know)",
    labels: ["outcome", "failure_code"],
  },
  tjm_outbox_backlog: {
    type: "gauge",
    help: "Outbox rows not yet published to NATS",
    labels: [],
  },
  tjm_outbox_oldest_age_seconds: {
    type: "gauge",
    help: "Age of the oldest unpublished outbox row (0 when none)",
    labels: [],
  },
  tjm_stale_reports_total: {
    type: "counter",
    help: "Worker reports acked and ignored by the fencing check, by reason",
    labels: ["reason"],
  },
  tjm_messages_total: {
    type: "counter",
    help: "Messages people receive (e-mail, SMS) by channel and outcome: sent, retried (an attempt failed, another follows), failed (attempts spent or refused), expired (its code expired unsent)",
    labels: ["channel", "outcome"],
  },
  tjm_backchannel_logouts_total: {
    type: "counter",
    help: "Back-channel logouts TJM owed after ending sessions itself, by outcome of each attempt: sent, retried (will be tried again), failed (given up)",
    labels: ["outcome"],
  },
  tjm_sse_subscribers: {
    type: "gauge",
    help: "Open event streams (SSE) of this process",
    labels: [],
  },
  tjm_workers: {
    type: "gauge",
    help: "Registered Workers by connectivity",
    labels: ["connectivity"],
  },
  tjm_nats_connected: {
    type: "gauge",
    help: "1 while this process's NATS connection is up",
    labels: [],
  },
  tjm_nats_reconnects_total: {
    type: "counter",
    help: "Times this process's NATS connection came back after a disconnect",
    labels: [],
  },
  tjm_postgres_pool_connections: {
    type: "gauge",
    help: "This process's PostgreSQL pool: open connections, busy ones (in a query or a transaction), and its max",
    labels: ["state"],
  },
  tjm_postgres_waiting_queries: {
    type: "gauge",
    help: "Queries of this process waiting for a pool connection",
    labels: [],
  },
} as const satisfies Record<string, SeriesSpec>;

export type ManagerSeriesName = keyof typeof MANAGER_SERIES;

// ---- label values ------------------------------------------------------------------------

export const PRIORITY_BANDS = ["high", "normal", "low"] as const;
export type PriorityBand = (typeof PRIORITY_BANDS)[number];

export const priorityBand = (priority: number): PriorityBand =>
  priority > 0 ? "high" : priority < 0 ? "low" : "normal";

export const ATTEMPT_OUTCOMES = ["succeeded", "failed", "cancelled"] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const MESSAGE_CHANNELS = ["email", "sms"] as const;
export const MESSAGE_OUTCOMES = ["sent", "retried", "failed", "expired"] as const;
export const BACKCHANNEL_LOGOUT_OUTCOMES = ["sent", "retried", "failed"] as const;
export type BackchannelLogoutOutcome = (typeof BACKCHANNEL_LOGOUT_OUTCOMES)[number];

export const POOL_STATES = ["open", "busy", "max"] as const;

export { WORKER_POOLS };

/**
 * The failure codes a label may carry: the Manager's own and the ones the Worker agent reports
 * (worker-agent/README.md). A Worker may report any well-formed code, so the rest become OTHER.
 */
export const KNOWN_FAILURE_CODES: readonly string[] = [
  ...Object.values(FAILURE_CODES),
  "INPUT_NOT_FOUND",
  "INPUT_UNREADABLE",
  "INPUT_INCOMPATIBLE",
  "PLAN_UNSUPPORTED",
  "ENCODE_FAILED",
  "STORAGE_ACCESS_DENIED",
  "STORAGE_BUCKET_NOT_FOUND",
  "STORAGE_UNAVAILABLE",
  "STORAGE_FAILED",
  "WORKER_ERROR",
];

const knownFailureCodes = new Set(KNOWN_FAILURE_CODES);

export const failureCodeLabel = (code: string | undefined): string =>
  code === undefined ? "none" : knownFailureCodes.has(code) ? code : "OTHER";
