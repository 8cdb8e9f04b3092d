/**
 * The Manager's Prometheus metrics: one registry per Manager (tests run several in a process),
 * the hooks the features call where a value is observed, and the scrape, which reads what is
 * cheaper to read than to track (stored counts, pool, NATS link, open streams).
 */
import type { Logger } from "@tjm/platform";
import type { MiddlewareHandler } from "hono";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { JOB_STATES, type StaleReason } from "../lifecycle/index.ts";
import type { Broker } from "../platform/broker.ts";
import { poolState, type Sql, withTimeout } from "../platform/db.ts";
import { CONNECTIVITY_STATES } from "../workers/store.ts";
import { attemptEnding, leasedAttempt, type PublishedRow } from "./outcomes.ts";
import {
  BACKCHANNEL_LOGOUT_OUTCOMES,
  type BackchannelLogoutOutcome,
  KNOWN_FAILURE_CODES,
  MANAGER_SERIES,
  type ManagerSeriesName,
  MESSAGE_CHANNELS,
  MESSAGE_OUTCOMES,
  POOL_STATES,
  PRIORITY_BANDS,
  WORKER_POOLS,
} from "./series.ts";
import { dispatchLatencies, readStoredCounts } from "./store.ts";

type MessageChannel = (typeof MESSAGE_CHANNELS)[number];
type MessageOutcome = (typeof MESSAGE_OUTCOMES)[number];

/** Where /metrics is served: the API port, a port of its own (METRICS_PORT), or nowhere. */
export type MetricsEndpoint = "api-port" | "own-port" | "none";

export interface MetricsSettings {
  /** METRICS_ENABLED: off, nothing is collected and nothing served. */
  enabled: boolean;
  /** METRICS_PORT is set: the entrypoint serves /metrics there, and the API port does not. */
  ownPort: boolean;
  /** METRICS_BEARER_TOKEN: when set, a scrape must present it. */
  bearerToken: string | undefined;
}

export interface MetricsSources {
  sql: Sql;
  /** The Manager's own connection (not the prefix-guarded view): its link is what is reported. */
  broker: Broker;
  /** Open event streams of this process. */
  sseSubscribers: () => number;
  logger: Logger;
}

export interface ManagerMetrics {
  readonly endpoint: MetricsEndpoint;
  readonly bearerToken: string | undefined;
  /** Times POST /api/v1/operations/jobs; mounted before authentication, so the time is the client's. */
  readonly timeSubmit: MiddlewareHandler;
  /** The relay committed these rows as published: leases (dispatch latency) and attempts' ends. */
  outboxPublished(rows: readonly PublishedRow[]): void;
  staleReport(reason: StaleReason): void;
  /** A message's attempt ended (identity/delivery). */
  messageOutcome(channel: MessageChannel, outcome: MessageOutcome): void;
  /** The back-channel logout sender settled one attempt of a row. */
  backchannelLogout(outcome: BackchannelLogoutOutcome): void;
  /** The Prometheus text exposition. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** Longer than any healthy scrape query; a PostgreSQL that does not answer leaves its series out. */
const STORED_COUNTS_TIMEOUT_MS = 3000;

const SUBMIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Seconds to hours: the wait includes the time a job spends queued behind others. */
const DISPATCH_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

const STALE_REASONS: readonly StaleReason[] = [
  "unknown-attempt",
  "not-current-attempt",
  "fencing-token",
  "other-worker",
  "old-instance",
  "attempt-ended",
];

const passThrough: MiddlewareHandler = (_c, next) => next();

let processRegistry: Registry | undefined;

/**
 * prom-client's process and runtime metrics (process_*, nodejs_*) describe the process, not a
 * Manager: collected once per process, since each collector keeps an event-loop monitor and a
 * GC observer for good and a test process builds many Managers.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const DISABLED: ManagerMetrics = {
  endpoint: "none",
  bearerToken: undefined,
  timeSubmit: passThrough,
  outboxPublished() {},
  staleReport() {},
  messageOutcome() {},
  backchannelLogout() {},
  scrape: () => Promise.reject(new Error("metrics are disabled (METRICS_ENABLED=false)")),
};

export function createManagerMetrics(settings: MetricsSettings, sources: MetricsSources): ManagerMetrics {
  if (!settings.enabled) return DISABLED;
  const { sql, broker, logger } = sources;
  const registry = new Registry();
  const spec = (name: ManagerSeriesName) => ({
    name,
    help: MANAGER_SERIES[name].help,
    labelNames: [...MANAGER_SERIES[name].labels],
    registers: [registry],
  });

  const jobs = new Gauge(spec("tjm_jobs"));
  const queueDepth = new Gauge(spec("tjm_queue_depth"));
  const submitDuration = new Histogram({
    ...spec("tjm_job_submit_duration_seconds"),
    buckets: SUBMIT_BUCKETS,
  });
  const dispatchLatency = new Histogram({
    ...spec("tjm_dispatch_latency_seconds"),
    buckets: DISPATCH_BUCKETS,
  });
  const attemptOutcomes = new Counter(spec("tjm_attempt_outcomes_total"));
  const outboxBacklog = new Gauge(spec("tjm_outbox_backlog"));
  const outboxOldestAge = new Gauge(spec("tjm_outbox_oldest_age_seconds"));
  const staleReports = new Counter(spec("tjm_stale_reports_total"));
  const messages = new Counter(spec("tjm_messages_total"));
  for (const channel of MESSAGE_CHANNELS) {
    for (const outcome of MESSAGE_OUTCOMES) messages.inc({ channel, outcome }, 0);
  }
  const backchannelLogouts = new Counter(spec("tjm_backchannel_logouts_total"));
  const sseSubscribers = new Gauge(spec("tjm_sse_subscribers"));
  const workers = new Gauge(spec("tjm_workers"));
  const natsConnected = new Gauge(spec("tjm_nats_connected"));
  const natsReconnects = new Counter(spec("tjm_nats_reconnects_total"));
  const poolConnections = new Gauge(spec("tjm_postgres_pool_connections"));
  const waitingQueries = new Gauge(spec("tjm_postgres_waiting_queries"));

  // Every known label set from 0, so rate() and absent() see a series before its first event.
  for (const pool of WORKER_POOLS) dispatchLatency.zero({ pool });
  attemptOutcomes.inc({ outcome: "succeeded", failure_code: "none" }, 0);
  attemptOutcomes.inc({ outcome: "cancelled", failure_code: "none" }, 0);
  for (const code of [...KNOWN_FAILURE_CODES, "OTHER"]) {
    attemptOutcomes.inc({ outcome: "failed", failure_code: code }, 0);
  }
  for (const reason of STALE_REASONS) staleReports.inc({ reason }, 0);
  for (const outcome of BACKCHANNEL_LOGOUT_OUTCOMES) backchannelLogouts.inc({ outcome }, 0);
  let reconnectsCounted = 0;
  const exposed = Registry.merge([processMetrics(), registry]);
  let scraping: Promise<unknown> = Promise.resolve();

  const observeDispatches = async (attemptIds: string[]) => {
    try {
      for (const { workerPool, seconds } of await dispatchLatencies(sql, attemptIds)) {
        dispatchLatency.observe({ pool: workerPool }, Math.max(0, seconds));
      }
    } catch (err) {
      logger.debug("dispatch latency not observed", { err, leases: attemptIds.length });
    }
  };

  /** Sets the gauges read at scrape time; the stored ones are left empty when PostgreSQL does not answer. */
  const readCurrentValues = async () => {
    const counts = await withTimeout(readStoredCounts(sql), STORED_COUNTS_TIMEOUT_MS, "PostgreSQL").catch(
      (err) => {
        logger.warn("metrics: stored counts not read; their series are left out of this scrape", { err });
        return undefined;
      },
    );
    for (const gauge of [jobs, queueDepth, workers, outboxBacklog, outboxOldestAge]) gauge.reset();
    if (counts) {
      for (const state of JOB_STATES) jobs.set({ state }, counts.jobsByState.get(state) ?? 0);
      for (const pool of WORKER_POOLS) {
        for (const band of PRIORITY_BANDS) {
          queueDepth.set({ pool, priority_band: band }, counts.queueDepth.get(`${pool}/${band}`) ?? 0);
        }
      }
      for (const connectivity of CONNECTIVITY_STATES) {
        workers.set({ connectivity }, counts.workersByConnectivity.get(connectivity) ?? 0);
      }
      outboxBacklog.set(counts.outboxBacklog);
      outboxOldestAge.set(counts.outboxOldestAgeSeconds);
    }
    sseSubscribers.set(sources.sseSubscribers());
    const link = broker.status?.() ?? { connected: broker.connection() !== undefined, reconnects: 0 };
    natsConnected.set(link.connected ? 1 : 0);
    natsReconnects.inc(Math.max(0, link.reconnects - reconnectsCounted));
    reconnectsCounted = Math.max(reconnectsCounted, link.reconnects);
    const pool = poolState(sql);
    poolConnections.reset();
    waitingQueries.reset();
    if (pool) {
      for (const state of POOL_STATES) poolConnections.set({ state }, pool[state]);
      waitingQueries.set(pool.waiting);
    }
  };

  return {
    endpoint: settings.ownPort ? "own-port" : "api-port",
    bearerToken: settings.bearerToken,
    timeSubmit: async (c, next) => {
      if (c.req.method !== "POST") return next();
      const end = submitDuration.startTimer();
      try {
        await next();
      } finally {
        end();
      }
    },
    outboxPublished(rows) {
      const leased: string[] = [];
      for (const row of rows) {
        const ending = attemptEnding(row);
        if (ending) attemptOutcomes.inc({ outcome: ending.outcome, failure_code: ending.failureCode });
        const attemptId = leasedAttempt(row);
        if (attemptId) leased.push(attemptId);
      }
      // Off the relay's path: one query per batch that carried leases.
      if (leased.length > 0) void observeDispatches(leased);
    },
    messageOutcome(channel, outcome) {
      messages.inc({ channel, outcome });
    },
    staleReport(reason) {
      staleReports.inc({ reason });
    },
    backchannelLogout(outcome) {
      backchannelLogouts.inc({ outcome });
    },
    scrape() {
      // One at a time: a second scrape's reset must not empty the gauges the first is rendering.
      const run = scraping.then(async () => {
        await readCurrentValues();
        return { contentType: exposed.contentType, body: await exposed.metrics() };
      });
      scraping = run.catch(() => {});
      return run;
    },
  };
}
