/**
 * Watches every Worker's heartbeats and records connectivity transitions. Every Manager
 * replica subscribes to all heartbeats (core NATS, no queue group) and keeps the latest in
 * memory; transitions go through a compare-and-set in PostgreSQL (store.ts), so exactly one
 * replica records each, with its outbox event.
 */

import type { Logger } from "@tjm/platform";
import { decodeMessage, type Heartbeat, HeartbeatSchema, parseWorkerSubject, subjects } from "@tjm/protocol";
import type { Broker } from "../platform/broker.ts";
import type { Sql } from "../platform/db.ts";
import { type ConnectivityTimings, judgeHeartbeat, nextDeadline, silenceTransition } from "./connectivity.ts";
import {
  type Connectivity,
  findWorker,
  listConnectedWorkers,
  transitionConnectivity,
  type WorkerLifecycleHooks,
  type WorkerRow,
} from "./store.ts";

/** What this replica knows of a Worker. */
interface Watch {
  instanceId: string;
  connectivity: Connectivity;
  /** When this Manager last accepted a heartbeat (its own clock), or began watching. */
  lastHeartbeatAt: number;
  /** True once a heartbeat was seen, not just the watch's starting point. */
  heard: boolean;
  lastSentAt: string | undefined;
  activeAttempts: Heartbeat["activeAttempts"];
  freeCapacity: number | undefined;
  /** A transition of this Worker is being recorded. */
  recording: boolean;
}

export interface LiveWorker {
  lastHeartbeatAt: Date | undefined;
  activeAttempts: Heartbeat["activeAttempts"];
  freeCapacity: number | undefined;
}

export type HeartbeatRejection =
  | "invalid"
  | "subject-mismatch"
  | "unknown-worker"
  | "stale-instance"
  | "replayed";

export interface MonitorOptions extends ConnectivityTimings {
  sql: Sql;
  hooks: WorkerLifecycleHooks;
  broker: Broker;
  subjectPrefix: string;
  logger: Logger;
  /** Told after a transition was recorded (outbox rows written, capacity maybe changed). */
  changed: () => void;
  now?: () => number;
}

/** A Worker unknown to this replica is looked up at most this often. */
const LOOKUP_INTERVAL_MS = 1000;
/** Bound on remembered lookups, so heartbeats naming random Workers cannot grow memory. */
const LOOKUPS_REMEMBERED = 10_000;
const TICK_MAX_MS = 250;

export class WorkerMonitor {
  private readonly watches = new Map<string, Watch>();
  private readonly lookedUpAt = new Map<string, number>();
  private readonly now: () => number;
  private readonly tickMs: number;
  private subscription: { unsubscribe(): void } | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private loaded: Promise<void> | undefined;
  private readonly pending = new Set<Promise<unknown>>();
  /** Heartbeats accepted, and dropped by reason: the metrics the bad-input tests read. */
  readonly counters = {
    accepted: 0,
    rejected: {} as Partial<Record<HeartbeatRejection, number>>,
    transitions: 0,
  };

  constructor(private readonly options: MonitorOptions) {
    this.now = options.now ?? Date.now;
    this.tickMs = Math.max(10, Math.min(TICK_MAX_MS, Math.floor(options.heartbeatIntervalMs / 4)));
  }

  start(): void {
    if (this.timer) return;
    this.loaded = this.load();
    this.subscription = this.options.broker.subscribe(
      subjects.allWorkerHeartbeats(this.options.subjectPrefix),
      (err, msg) => {
        if (err) this.options.logger.warn("heartbeat subscription error", { err });
        else this.receive(msg.subject, msg.data);
      },
    );
    this.timer = setInterval(() => this.tick(), this.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    await this.loaded?.catch(() => {});
    await Promise.allSettled([...this.pending]);
  }

  /** A Worker (re-)registered through this replica: watch its new instance from now. */
  instanceStarted(row: WorkerRow): void {
    this.watches.set(row.id, this.watchOf(row, this.now()));
  }

  live(workerId: string): LiveWorker | undefined {
    const watch = this.watches.get(workerId);
    if (!watch) return undefined;
    return {
      lastHeartbeatAt: watch.heard ? new Date(watch.lastHeartbeatAt) : undefined,
      activeAttempts: watch.activeAttempts,
      freeCapacity: watch.freeCapacity,
    };
  }

  /** Handles one heartbeat message; public so tests and benchmarks can drive it directly. */
  receive(subject: string, data: Uint8Array): void {
    const target = parseWorkerSubject(this.options.subjectPrefix, subject);
    const decoded = decodeMessage(HeartbeatSchema, data);
    if (!target || !decoded.ok) {
      this.reject("invalid", { subject, reason: decoded.ok ? "not a heartbeat subject" : decoded.reason });
      return;
    }
    const heartbeat = decoded.value;
    const watch = this.watches.get(target.workerId);
    const verdict = judgeHeartbeat(heartbeat, target.workerId, watch);
    if (verdict.accept && watch) {
      this.counters.accepted++;
      watch.lastHeartbeatAt = this.now();
      watch.heard = true;
      watch.lastSentAt = heartbeat.sentAt;
      watch.activeAttempts = heartbeat.activeAttempts;
      watch.freeCapacity = heartbeat.freeCapacity;
      if (watch.connectivity !== "ONLINE" && !watch.recording) this.record(target.workerId, watch, "ONLINE");
      return;
    }
    if (!verdict.accept && (verdict.reason === "unknown-worker" || verdict.reason === "stale-instance")) {
      // Another replica may have registered it, or started its new instance: ask PostgreSQL.
      if (this.lookUp(target.workerId, () => this.receive(subject, data))) return;
    }
    if (!verdict.accept) {
      this.reject(verdict.reason, { workerId: target.workerId, instanceId: heartbeat.instanceId });
    }
  }

  private reject(reason: HeartbeatRejection, details: Record<string, unknown>): void {
    this.counters.rejected[reason] = (this.counters.rejected[reason] ?? 0) + 1;
    this.options.logger.warn("heartbeat dropped", { reason, ...details });
  }

  /** Starts a lookup unless one was made recently; `retry` runs if it taught us something new. */
  private lookUp(workerId: string, retry: () => void): boolean {
    const at = this.now();
    const last = this.lookedUpAt.get(workerId);
    if (last !== undefined && at - last < LOOKUP_INTERVAL_MS) return false;
    if (this.lookedUpAt.size >= LOOKUPS_REMEMBERED) this.lookedUpAt.clear();
    this.lookedUpAt.set(workerId, at);
    const before = this.watches.get(workerId)?.instanceId;
    this.track(
      findWorker(this.options.sql, workerId).then((row) => {
        if (row && row.instanceId !== before) this.watches.set(workerId, this.watchOf(row, this.now()));
        retry();
      }),
    );
    return true;
  }

  private watchOf(row: WorkerRow, at: number): Watch {
    return {
      instanceId: row.instanceId,
      connectivity: row.connectivity,
      lastHeartbeatAt: at,
      heard: false,
      lastSentAt: undefined,
      activeAttempts: [],
      freeCapacity: undefined,
      recording: false,
    };
  }

  private async load(): Promise<void> {
    const rows = await listConnectedWorkers(this.options.sql).catch((err) => {
      this.options.logger.error("cannot load Workers to watch; retrying at the next tick", { err });
      return undefined;
    });
    if (!rows) {
      this.loaded = undefined;
      return;
    }
    // Silence is counted from now: this replica has heard nothing yet.
    const at = this.now();
    for (const row of rows) if (!this.watches.has(row.id)) this.watches.set(row.id, this.watchOf(row, at));
  }

  private tick(): void {
    this.loaded ??= this.load();
    const at = this.now();
    for (const [workerId, watch] of this.watches) {
      if (watch.recording || at < nextDeadline(watch.connectivity, watch.lastHeartbeatAt, this.options))
        continue;
      const to = silenceTransition(watch.connectivity, watch.lastHeartbeatAt, at, this.options);
      if (to) this.record(workerId, watch, to);
    }
  }

  private record(workerId: string, watch: Watch, to: Connectivity): void {
    const from = watch.connectivity;
    watch.recording = true;
    this.track(
      transitionConnectivity(this.options.sql, this.options.hooks, {
        workerId,
        instanceId: watch.instanceId,
        from,
        to,
        // The watch's starting point is not a heartbeat; only a heard one is stored.
        lastHeartbeatAt: watch.heard ? new Date(watch.lastHeartbeatAt) : undefined,
      })
        .then(async (row) => {
          if (row) {
            this.counters.transitions++;
            watch.connectivity = to;
            this.options.changed();
            this.options.logger.info("worker connectivity changed", { workerId, from, to });
            return;
          }
          // Another replica recorded it first, or the Worker started a new instance: catch up.
          const current = await findWorker(this.options.sql, workerId);
          if (!current) this.watches.delete(workerId);
          else if (current.instanceId !== watch.instanceId)
            this.watches.set(workerId, this.watchOf(current, this.now()));
          else watch.connectivity = current.connectivity;
        })
        .catch((err) =>
          this.options.logger.warn("cannot record a connectivity change; retrying", { workerId, err }),
        )
        .finally(() => {
          watch.recording = false;
        }),
    );
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch((err) => this.options.logger.warn("worker monitor lookup failed", { err }));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}
