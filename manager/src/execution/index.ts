/**
 * Execution: scheduling and leases, Worker reports, deadlines, promotion of finished outputs
 * and live progress. Background services that the Manager starts and stops as a whole.
 */

import type { Logger } from "@tjm/platform";
import type { OutputCommit, StorageSettings } from "@tjm/protocol";
import { createS3Client, readObjectTail } from "@tjm/storage";
import type { EventHub } from "../events/index.ts";
import { isTerminalAttemptState, type Loop } from "../lifecycle/index.ts";
import type { ManagerMetrics } from "../metrics/index.ts";
import type { OutboxRow } from "../outbox/index.ts";
import type { Broker } from "../platform/broker.ts";
import type { Sql } from "../platform/db.ts";
import { Dispatcher } from "./dispatcher.ts";
import { workerLifecycleHooks } from "./hooks.ts";
import { applyOperatorRequest } from "./operator-requests.ts";
import { ProgressTracker } from "./progress.ts";
import { Promoter } from "./promoter.ts";
import { ReportsConsumer } from "./reports.ts";
import { Sweeper } from "./sweeper.ts";

const LOG_READ_RETRY = { maxAttempts: 1, budgetMs: 0, initialDelayMs: 0, maxDelayMs: 0 };

export interface ExecutionOptions {
  sql: Sql;
  broker: Broker;
  logger: Logger;
  schema: string;
  subjectPrefix: string;
  events: EventHub;
  storage: StorageSettings;
  commit: OutputCommit;
  dispatchTimeoutMs: number;
  maxAttempts: number;
  metrics: ManagerMetrics;
  /** Told whenever execution committed outbox rows. */
  outboxWritten: () => void;
  /**
   * Told when leases were committed: the outbox rows to publish at once rather than by a batch,
   * and how many leases the relay must publish after a Worker's earlier commands.
   */
  leasesCommitted: (publishNow: readonly OutboxRow[], leftToRelay: number) => void;
}

export function createExecution(options: ExecutionOptions) {
  const { sql, broker, logger, subjectPrefix } = options;
  let storageClient: ReturnType<typeof createS3Client> | undefined;
  const storage = () => {
    storageClient ??= createS3Client(options.storage);
    return storageClient;
  };
  const progress = new ProgressTracker({
    sql,
    broker,
    subjectPrefix,
    logger,
    publish: (event) => options.events.publishLocal(event),
  });
  const promoter: Promoter = new Promoter({
    sql,
    logger,
    storage,
    maxAttempts: options.maxAttempts,
    promoted: (loopsToWake) => {
      options.outboxWritten();
      wake(loopsToWake);
    },
  });
  const dispatcher: Dispatcher = new Dispatcher({
    sql,
    schema: options.schema,
    logger,
    lease: { storage: options.storage, commit: options.commit, dispatchTimeoutMs: options.dispatchTimeoutMs },
    dispatched: options.leasesCommitted,
  });
  const loops: Record<Loop, { wake(): void }> = { dispatcher, promoter };
  const wake = (which: Iterable<Loop>) => {
    for (const loop of new Set(which)) loops[loop].wake();
  };
  const reports = new ReportsConsumer({
    sql,
    broker,
    subjectPrefix,
    logger,
    maxAttempts: options.maxAttempts,
    metrics: options.metrics,
    applied: (report, { to, effects }) => {
      options.outboxWritten();
      if (effects.discardReportedOutputs && report.type === "completed")
        void promoter.discard(report.outputs);
      if (to.attempt && isTerminalAttemptState(to.attempt)) progress.forget(report.attemptId);
      wake(effects.wake);
    },
  });
  const sweeper = new Sweeper({
    sql,
    logger,
    maxAttempts: options.maxAttempts,
    swept: (loopsToWake) => {
      options.outboxWritten();
      wake(loopsToWake);
    },
  });
  return {
    dispatcher,
    reports,
    sweeper,
    promoter,
    progress,
    hooks: workerLifecycleHooks(options.maxAttempts),
    applyOperatorRequest,
    // One try and no waiting: an operator is looking at the page.
    readLogTail: (logsUri: string, maxBytes: number) =>
      readObjectTail(storage(), logsUri, maxBytes, { retry: LOG_READ_RETRY, logger }),
    start() {
      progress.start();
      reports.start();
      dispatcher.start();
      sweeper.start();
      promoter.start();
    },
    async stop() {
      progress.stop();
      await sweeper.stop();
      await dispatcher.stop();
      await promoter.stop();
      await reports.stop();
      storageClient?.destroy();
    },
  };
}

export type Execution = ReturnType<typeof createExecution>;
