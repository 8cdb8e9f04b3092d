/**
 * Applies Worker reports from <PREFIX>_REPORTS. Every Manager replica pulls from the one
 * durable consumer, so each report is handled by one replica at a time. A report is checked
 * against its attempt's fencing token inside the transaction that applies it: that check,
 * not the JetStream ack, is what makes a report count. Invalid reports are logged, counted
 * and terminated; stale ones are logged, counted and acked; neither changes anything.
 */
import { AckPolicy, DeliverPolicy, type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { assertNever, type Logger } from "@tjm/platform";
import {
  decodeMessage,
  MANAGER_REPORTS_CONSUMER,
  parseWorkerSubject,
  type Report,
  ReportSchema,
  streams,
} from "@tjm/protocol";
import { checkFence, reportTrigger, type StaleReason, type Transition } from "../lifecycle/index.ts";
import type { ManagerMetrics } from "../metrics/index.ts";
import { ensurePrefixStreams, PULL_EXPIRES_MS } from "../outbox/index.ts";
import type { Broker } from "../platform/broker.ts";
import type { Sql } from "../platform/db.ts";
import { applyTrigger, lockAttempt, type TransitionInput } from "./transitions.ts";

const ACK_WAIT_NS = 30 * 1_000_000_000;
const RETRY_MS = 1000;

export interface ReportsOptions {
  sql: Sql;
  broker: Broker;
  subjectPrefix: string;
  logger: Logger;
  maxAttempts: number;
  metrics: Pick<ManagerMetrics, "staleReport">;
  /** Told after a report made a transition: its effects say which loops to wake. */
  applied: (report: Report, transition: Transition) => void;
}

export type ReportOutcome =
  | { kind: "applied"; transition: Transition; jobId: string }
  | { kind: "ignored"; why: string; jobId: string }
  | { kind: "stale"; reason: StaleReason };

export class ReportsConsumer {
  private stopped = true;
  private running: Promise<void> | undefined;
  private stopConsuming: (() => void) | undefined;
  /** What happened to reports, by outcome and reason: the metric the bad-input tests read. */
  readonly counters = {
    applied: 0,
    ignored: 0,
    invalid: 0,
    subjectMismatch: 0,
    stale: {} as Partial<Record<StaleReason, number>>,
  };

  constructor(private readonly options: ReportsOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopConsuming?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const nc = this.options.broker.connection();
      if (!nc) {
        await sleep(RETRY_MS);
        continue;
      }
      try {
        await this.consume(nc);
      } catch (err) {
        if (!this.stopped) this.options.logger.warn("reports consumer stopped; restarting", { err });
        await sleep(RETRY_MS);
      }
    }
  }

  private async consume(nc: NatsConnection): Promise<void> {
    const stream = streams(this.options.subjectPrefix).reports.name;
    await ensurePrefixStreams(nc, this.options.subjectPrefix, this.options.broker.streamReplicas);
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(stream, {
      durable_name: MANAGER_REPORTS_CONSUMER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ACK_WAIT_NS,
    });
    const consumer = await jetstream(nc).consumers.get(stream, MANAGER_REPORTS_CONSUMER);
    // A deleted stream or consumer ends the loop below (instead of the client polling for it
    // every 30 s), and the next turn creates both again.
    const messages = await consumer.consume({
      max_messages: 64,
      abort_on_missing_resource: true,
      expires: PULL_EXPIRES_MS,
    });
    this.stopConsuming = () => void messages.stop();
    if (this.stopped) messages.stop();
    for await (const message of messages) await this.handle(message);
  }

  private async handle(message: JsMsg): Promise<void> {
    const target = parseWorkerSubject(this.options.subjectPrefix, message.subject);
    const decoded = decodeMessage(ReportSchema, message.data);
    if (!target || !decoded.ok) {
      this.counters.invalid++;
      this.options.logger.warn("report dropped: invalid", {
        subject: message.subject,
        reason: decoded.ok ? "not a reports subject" : decoded.reason,
      });
      message.term();
      return;
    }
    const report = decoded.value;
    if (report.workerId !== target.workerId) {
      this.counters.subjectMismatch++;
      this.options.logger.warn("report dropped: the body names another Worker than its subject", {
        subject: message.subject,
        workerId: report.workerId,
      });
      message.term();
      return;
    }
    try {
      const outcome = await this.apply(report);
      if (outcome.kind === "stale") {
        this.counters.stale[outcome.reason] = (this.counters.stale[outcome.reason] ?? 0) + 1;
        this.options.metrics.staleReport(outcome.reason);
        this.options.logger.warn("stale report ignored", {
          type: report.type,
          reason: outcome.reason,
          workerId: report.workerId,
          attemptId: report.attemptId,
          fencingToken: report.fencingToken,
        });
      } else if (outcome.kind === "ignored") {
        this.counters.ignored++;
        // A `started` after `accepted` lands here on every job: its ids let it be followed too.
        this.options.logger.debug("report changes nothing", {
          type: report.type,
          jobId: outcome.jobId,
          attemptId: report.attemptId,
          workerId: report.workerId,
          why: outcome.why,
        });
      } else {
        this.counters.applied++;
        this.options.logger.info("report applied", {
          type: report.type,
          jobId: outcome.jobId,
          attemptId: report.attemptId,
          workerId: report.workerId,
          transition: outcome.transition.name,
          jobState: outcome.transition.to.job,
          attemptState: outcome.transition.to.attempt,
        });
        this.options.applied(report, outcome.transition);
      }
      message.ack();
    } catch (err) {
      this.options.logger.warn("report could not be applied; redelivering", { type: report.type, err });
      message.nak(RETRY_MS);
    }
  }

  /** Applies one report in one transaction; exported through the class for tests. */
  async apply(report: Report): Promise<ReportOutcome> {
    return this.options.sql.begin(async (tx): Promise<ReportOutcome> => {
      const attempt = await lockAttempt(tx, report.attemptId);
      const stale = checkFence(
        report,
        attempt && { ...attempt, isCurrent: attempt.currentAttemptId === attempt.attemptId },
      );
      if (stale || !attempt) return { kind: "stale", reason: stale ?? "unknown-attempt" };
      const resolution = await applyTrigger(tx, attempt, reportTrigger(report), {
        maxAttempts: this.options.maxAttempts,
        input: transitionInput(report),
      });
      return resolution.kind === "transition"
        ? { kind: "applied", transition: resolution.transition, jobId: attempt.jobId }
        : { kind: "ignored", why: resolution.reason, jobId: attempt.jobId };
    });
  }
}

/** What a report brings to its transition besides its type. */
function transitionInput(report: Report): TransitionInput {
  switch (report.type) {
    case "rejected":
      return { failure: { message: `The Worker rejected the lease: ${report.reason}` } };
    case "upload-paused":
      return { pauseReason: report.reason };
    case "input-waiting":
      return { inputWait: { since: report.since, lastError: report.lastError } };
    case "completed":
      return { completion: { outputs: report.outputs, logsUri: report.logsUri } };
    case "failed":
      return {
        failure: { code: report.failureCode, message: report.failureMessage, logsUri: report.logsUri },
      };
    case "accepted":
    case "started":
    case "encoded":
    case "upload-resumed":
    case "input-resumed":
    case "cancelled":
      return {};
    default:
      return assertNever(report);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
