/**
 * Live progress of running attempts, held in memory only (lost on restart, refilled by the
 * next update). Every replica subscribes to all Workers' progress on core NATS, checks each
 * update against the attempt's current lease (its fencing token, Worker and instance) and
 * keeps the latest; SSE subscribers get a job.progress event at most once a second per job.
 */

import type { Logger } from "@tjm/platform";
import { decodeMessage, type Progress, ProgressSchema, parseWorkerSubject, subjects } from "@tjm/protocol";
import type { EventEnvelope } from "../outbox/index.ts";
import type { Broker } from "../platform/broker.ts";
import type { Sql } from "../platform/db.ts";
import type { WorkerStatistic } from "../workers/index.ts";

interface Lease {
  jobId: string;
  fencingToken: string;
  workerId: string | null;
  instanceId: string | null;
  held: boolean;
  fetchedAt: number;
}

interface Live {
  jobId: string;
  workerId: string;
  progress: Progress;
  receivedAt: number;
}

/** A lease is re-read at most this often while its Worker reports progress. */
const LEASE_CACHE_MS = 2000;
const SSE_INTERVAL_MS = 1000;
/** Progress nobody updated for this long is dropped (its attempt ended or its Worker is gone). */
const FORGET_AFTER_MS = 60_000;

export interface ProgressOptions {
  sql: Sql;
  broker: Broker;
  subjectPrefix: string;
  logger: Logger;
  publish: (event: EventEnvelope) => void;
}

export class ProgressTracker {
  private readonly live = new Map<string, Live>();
  private readonly leases = new Map<string, Lease>();
  private readonly lastSent = new Map<string, number>();
  private subscription: { unsubscribe(): void } | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private sequence = 0;
  readonly counters = { accepted: 0, rejected: {} as Record<string, number> };

  constructor(private readonly options: ProgressOptions) {}

  start(): void {
    this.subscription ??= this.options.broker.subscribe(
      subjects.allWorkerProgress(this.options.subjectPrefix),
      (err, msg) => {
        if (err) this.options.logger.warn("progress subscription error", { err });
        else
          void this.receive(msg.subject, msg.data).catch((error) =>
            this.options.logger.warn("progress could not be checked", { err: error }),
          );
      },
    );
    this.timer ??= setInterval(() => this.expire(), 1000);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  /** The current attempt's percent, or undefined when no update arrived since this Manager started. */
  percent(attemptId: string): number | undefined {
    return this.live.get(attemptId)?.progress.percent;
  }

  statisticsOf(workerId: string): WorkerStatistic[] {
    return [...this.live.entries()]
      .filter(([, live]) => live.workerId === workerId)
      .map(([attemptId, { jobId, progress }]) => ({
        attemptId,
        jobId,
        percent: progress.percent,
        fps: progress.fps,
        bitrateKbps: progress.bitrateKbps,
        speed: progress.speed,
        etaSeconds: progress.etaSeconds,
        at: progress.at,
      }));
  }

  /** The attempt ended: its progress is history. */
  forget(attemptId: string): void {
    this.live.delete(attemptId);
    this.leases.delete(attemptId);
  }

  /** Handles one progress message; public so tests can drive it. */
  async receive(subject: string, data: Uint8Array): Promise<void> {
    const target = parseWorkerSubject(this.options.subjectPrefix, subject);
    const decoded = decodeMessage(ProgressSchema, data);
    if (!target || !decoded.ok) return this.reject("invalid", { subject });
    const progress = decoded.value;
    if (progress.workerId !== target.workerId) return this.reject("subject-mismatch", { subject });
    const lease = await this.lease(progress.attemptId);
    if (
      !lease?.held ||
      lease.fencingToken !== progress.fencingToken ||
      lease.workerId !== progress.workerId ||
      lease.instanceId !== progress.instanceId
    ) {
      return this.reject("stale", { attemptId: progress.attemptId, workerId: progress.workerId });
    }
    const previous = this.live.get(progress.attemptId);
    if (previous && Date.parse(previous.progress.at) >= Date.parse(progress.at))
      return this.reject("out-of-order", {});
    this.counters.accepted++;
    const now = Date.now();
    this.live.set(progress.attemptId, {
      jobId: lease.jobId,
      workerId: progress.workerId,
      progress,
      receivedAt: now,
    });
    const sent = this.lastSent.get(lease.jobId) ?? 0;
    if (now - sent >= SSE_INTERVAL_MS || progress.percent >= 100) {
      this.lastSent.set(lease.jobId, now);
      this.options.publish({
        id: `progress-${++this.sequence}`,
        kind: "job.progress",
        occurredAt: progress.at,
        data: {
          jobId: lease.jobId,
          attemptId: progress.attemptId,
          workerId: progress.workerId,
          percent: progress.percent,
          fps: progress.fps,
          bitrateKbps: progress.bitrateKbps,
          speed: progress.speed,
          etaSeconds: progress.etaSeconds,
        },
      });
    }
  }

  private reject(reason: string, details: Record<string, unknown>): void {
    this.counters.rejected[reason] = (this.counters.rejected[reason] ?? 0) + 1;
    this.options.logger.debug("progress dropped", { reason, ...details });
  }

  private async lease(attemptId: string): Promise<Lease | undefined> {
    const cached = this.leases.get(attemptId);
    if (cached && Date.now() - cached.fetchedAt < LEASE_CACHE_MS) return cached;
    const [row] = await this.options.sql<Omit<Lease, "fetchedAt">[]>`
      select a.job_id, a.fencing_token, a.worker_id, a.instance_id,
             (j.current_attempt_id = a.id and a.state in ('DISPATCHED', 'RUNNING', 'UPLOADING')) as held
      from attempts a join jobs j on j.id = a.job_id where a.id = ${attemptId}`;
    if (!row) return undefined;
    const lease = { ...row, fetchedAt: Date.now() };
    this.leases.set(attemptId, lease);
    return lease;
  }

  private expire(): void {
    const cutoff = Date.now() - FORGET_AFTER_MS;
    for (const [attemptId, live] of this.live) if (live.receivedAt < cutoff) this.forget(attemptId);
    for (const [jobId, sent] of this.lastSent) if (sent < cutoff) this.lastSent.delete(jobId);
    for (const [attemptId, lease] of this.leases) if (lease.fetchedAt < cutoff) this.leases.delete(attemptId);
  }
}
