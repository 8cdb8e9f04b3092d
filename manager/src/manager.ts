/**
 * One Manager: the HTTP app and the background work that goes with it (outbox relay, event
 * hub, heartbeat monitor, the Workers' command consumers, job count compaction). The
 * entrypoints and the test harness both build it here, so what is tested is what runs.
 */

import type { StorageSettings } from "@tjm/protocol";
import { type App, type AppDeps, createApp } from "./app.ts";
import { EventHub } from "./events/index.ts";
import { createExecution, type Execution } from "./execution/index.ts";
import { startJobCountCompaction } from "./jobs/count-compaction.ts";
import { createOutboxRelay } from "./outbox/index.ts";
import type { Broker } from "./platform/broker.ts";
import type { Sql } from "./platform/db.ts";
import type { Logger } from "./platform/logger.ts";
import { type InstallationConflictError, InstallationPresence } from "./platform/presence.ts";
import { CommandConsumerKeeper, type CredentialIssuer, WorkerMonitor } from "./workers/index.ts";

export interface ManagerOptions
  extends Pick<
    AppDeps,
    "auth" | "maxBodyBytes" | "scalarBundle" | "enrollmentTokenSecret" | "sseKeepAliveMs"
  > {
  sql: Sql;
  broker: Broker;
  logger: Logger;
  schema: string;
  subjectPrefix: string;
  tenantAudience: string;
  workers: {
    natsUrl: string;
    credentials: CredentialIssuer | undefined;
    heartbeatIntervalMs: number;
    lostAfterMs: number;
  };
  execution: {
    storage: StorageSettings;
    dispatchTimeoutMs: number;
    maxAttempts: number;
    jobDeadlineHours: number;
  };
  /**
   * Run the background loops (default true). Only tests that drive the sweeps and monitors
   * by hand turn them off, so that nothing moves unless they call it.
   */
  background?: boolean;
  /** Also told when a request committed outbox rows (tests count these). */
  onOutboxWritten?: () => void;
  /**
   * Told when another installation turns out to be live on the prefix after start (NATS was
   * down then); this Manager no longer touches the prefix. A conflict found at start rejects
   * startManager instead.
   */
  onInstallationConflict?: (conflict: InstallationConflictError) => void;
}

export interface Manager {
  app: App;
  monitor: WorkerMonitor;
  commandConsumers: CommandConsumerKeeper;
  events: EventHub;
  execution: Execution;
  presence: InstallationPresence;
  /** Stops the background work; the caller stops serving first and closes sql and broker after. */
  stop(): Promise<void>;
}

/**
 * How long start waits for NATS to say whether another installation is live on the prefix;
 * a Manager whose NATS is down starts anyway and checks once it connects.
 */
const PRESENCE_START_WAIT_MS = 2000;

export async function startManager(options: ManagerOptions): Promise<Manager> {
  const { sql, logger, subjectPrefix } = options;
  let started = false;
  const presence = new InstallationPresence({
    broker: options.broker,
    sql,
    subjectPrefix,
    logger,
    onConflict: (conflict) => {
      if (started) options.onInstallationConflict?.(conflict);
    },
  });
  presence.start();
  await presence.settled(PRESENCE_START_WAIT_MS);
  if (presence.conflict) {
    await presence.stop();
    throw presence.conflict;
  }
  started = true;
  // Until this Manager holds the prefix, it publishes and consumes nothing on it.
  const broker = presence.guardedBroker();
  const relay = createOutboxRelay({ sql, schema: options.schema, subjectPrefix, broker, logger });
  const events = new EventHub(broker, subjectPrefix, logger);
  const outboxWritten = (urgent = false) => {
    options.onOutboxWritten?.();
    relay.wake(urgent);
  };
  const execution = createExecution({
    sql,
    broker,
    logger,
    schema: options.schema,
    subjectPrefix,
    events,
    storage: options.execution.storage,
    dispatchTimeoutMs: options.execution.dispatchTimeoutMs,
    maxAttempts: options.execution.maxAttempts,
    outboxWritten,
  });
  const monitor = new WorkerMonitor({
    sql,
    broker,
    logger,
    subjectPrefix,
    hooks: execution.hooks,
    heartbeatIntervalMs: options.workers.heartbeatIntervalMs,
    lostAfterMs: options.workers.lostAfterMs,
    // A Worker back ONLINE (or heartbeating with room) may take queued jobs; an OFFLINE one freed its jobs.
    changed: () => {
      outboxWritten();
      execution.dispatcher.wake();
    },
  });
  const commandConsumers = new CommandConsumerKeeper({ sql, broker, subjectPrefix, logger });
  const background = options.background !== false;
  let stopCompaction = async () => {};
  if (background) {
    await relay.start();
    events.start();
    monitor.start();
    commandConsumers.start();
    execution.start();
    stopCompaction = startJobCountCompaction(sql, logger);
  }
  const app = createApp({
    sql,
    broker,
    logger,
    auth: options.auth,
    maxBodyBytes: options.maxBodyBytes,
    liveProgress: (attemptId) => execution.progress.percent(attemptId),
    scalarBundle: options.scalarBundle,
    events,
    enrollmentTokenSecret: options.enrollmentTokenSecret,
    outboxWritten: () => {
      outboxWritten();
      // Every successful write may have queued a job or freed a Worker.
      execution.dispatcher.wake();
    },
    tenantAudience: options.tenantAudience,
    sseKeepAliveMs: options.sseKeepAliveMs,
    workers: {
      subjectPrefix,
      natsUrl: options.workers.natsUrl,
      credentials: options.workers.credentials,
      heartbeatIntervalMs: options.workers.heartbeatIntervalMs,
      monitor,
      hooks: execution.hooks,
      statistics: (workerId) => execution.progress.statisticsOf(workerId),
    },
    jobs: {
      jobDeadlineHours: options.execution.jobDeadlineHours,
      cancelHeldAttempt: execution.cancelHeldAttempt,
      resumeUploads: execution.resumeUploads,
    },
  });
  return {
    app,
    monitor,
    commandConsumers,
    events,
    execution,
    presence,
    async stop() {
      try {
        await execution.stop();
        await monitor.stop();
        await commandConsumers.stop();
        await relay.stop();
        await events.stop();
        await stopCompaction();
      } finally {
        // Last: another installation may take the prefix as soon as this record is gone.
        await presence.stop();
      }
    },
  };
}
