/**
 * One live installation per subject prefix. Managers of two installations (two databases) on
 * one prefix would consume each other's reports and send leases to each other's Workers, so
 * every running Manager keeps its installation's record in a NATS KV bucket of the prefix, and
 * a Manager that finds a live record of another installation does not touch the prefix.
 *
 * One key holds the installation and its running Managers; every write is compare-and-set on
 * the key's revision, so two installations starting at once cannot both win. The bucket's
 * max_age makes a record that nobody refreshed disappear (Managers that died without
 * removing it); NATS 2.9 has no per-message TTL, a per-bucket max_age works.
 */
import { hostname } from "node:os";
import process from "node:process";
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { type KV, type KvEntry, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@tjm/platform";
import { presenceBucket } from "@tjm/protocol";
import { z } from "zod";
import type { Broker } from "../platform/broker.ts";
import type { Sql } from "../platform/db.ts";

/** How often a running Manager refreshes its record. */
export const PRESENCE_REFRESH_MS = 5000;
/** The bucket's max_age: a record three refreshes old belongs to Managers that are gone. */
export const PRESENCE_TTL_MS = 3 * PRESENCE_REFRESH_MS;
/** How often a Manager that does not hold the prefix yet looks for a NATS connection. */
const CLAIM_RETRY_MS = 200;
/** How soon a Manager that does not hold the prefix yet tries again after a failed claim. */
const CLAIM_FAILED_RETRY_MS = 1000;
/** Compare-and-set rounds lost to other Managers before a refresh gives up until the next one. */
const MAX_CONTENDED_WRITES = 10;
/** The one key of the bucket. */
export const PRESENCE_KEY = "installation";

const ManagerRecordSchema = z.object({
  instanceId: z.string(),
  host: z.string(),
  pid: z.number(),
  startedAt: z.string(),
  refreshedAt: z.string(),
});
const PresenceRecordSchema = z.object({
  installationId: z.string(),
  managers: z.array(ManagerRecordSchema),
});
export type ManagerRecord = z.infer<typeof ManagerRecordSchema>;
export type PresenceRecord = z.infer<typeof PresenceRecordSchema>;

export class InstallationConflictError extends Error {
  constructor(
    readonly subjectPrefix: string,
    readonly installationId: string,
    readonly live: PresenceRecord,
  ) {
    const managers = live.managers
      .map((m) => `host ${m.host}, pid ${m.pid}, started ${m.startedAt}, refreshed ${m.refreshedAt}`)
      .join("; ");
    super(
      `Another TJM installation is live on NATS_SUBJECT_PREFIX "${subjectPrefix}": installation ${live.installationId} (Managers: ${managers}). ` +
        `This database is installation ${installationId}. Two installations on one prefix would consume each other's reports and commands: ` +
        `stop the other installation's Managers, or give this one its own NATS_SUBJECT_PREFIX.`,
    );
    this.name = "InstallationConflictError";
  }
}

/** The installation this database is (made by migration 0005, kept by a dump). */
export async function readInstallationId(sql: Sql): Promise<string> {
  const [row] = await sql<{ id: string }[]>`select id from installation`;
  if (!row) throw new Error("the installation table is empty; it holds one row made by migration 0005");
  return row.id;
}

export interface PresenceOptions {
  broker: Broker;
  /** Where the installation id is read from (once, at the first claim). */
  sql: Sql;
  subjectPrefix: string;
  logger: Logger;
  /** Told of the first live record of another installation found; the prefix stays untouched. */
  onConflict?: (conflict: InstallationConflictError) => void;
  refreshMs?: number;
  ttlMs?: number;
}

export class InstallationPresence {
  private readonly refreshMs: number;
  private readonly ttlMs: number;
  private readonly self: Omit<ManagerRecord, "refreshedAt">;
  private holding = false;
  private found: InstallationConflictError | undefined;
  private stopped = true;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private readonly settledWaiters = new Set<() => void>();
  private opened: { nc: NatsConnection; kv: KV } | undefined;
  private installationId: string | undefined;

  constructor(private readonly options: PresenceOptions) {
    this.refreshMs = options.refreshMs ?? PRESENCE_REFRESH_MS;
    this.ttlMs = options.ttlMs ?? PRESENCE_TTL_MS;
    this.self = {
      instanceId: crypto.randomUUID(),
      host: hostname(),
      pid: process.pid,
      startedAt: new Date().toISOString(),
    };
  }

  /** Claims the prefix as soon as NATS is connected, then refreshes the record on a timer. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.tick();
  }

  /** True once this Manager's record is written and no other installation's was live. */
  get holdsPrefix(): boolean {
    return this.holding;
  }

  /** The live record of another installation, once one was found. */
  get conflict(): InstallationConflictError | undefined {
    return this.found;
  }

  /** Resolves once the prefix is held or a conflict found, or after `waitMs` (NATS not answering). */
  async settled(waitMs: number): Promise<void> {
    if (this.holding || this.found) return;
    let wake = () => {};
    const timer = new Promise<void>((resolve) => {
      const timeout = setTimeout(resolve, waitMs);
      wake = () => {
        clearTimeout(timeout);
        resolve();
      };
    });
    this.settledWaiters.add(wake);
    await timer;
    this.settledWaiters.delete(wake);
  }

  /**
   * The broker as the rest of the Manager sees it: no connection, and readiness reporting the
   * broker down, until this Manager holds the prefix. Core subscriptions (heartbeats,
   * progress) only listen, so they are not held back.
   */
  guardedBroker(): Broker {
    const { broker } = this.options;
    return {
      ping: async (timeoutMs) => {
        await broker.ping(timeoutMs);
        if (this.found) throw new Error(this.found.message);
        if (!this.holding)
          throw new Error(
            `not yet checked that no other installation is live on subject prefix "${this.options.subjectPrefix}"`,
          );
      },
      connection: () => (this.holding ? broker.connection() : undefined),
      subscribe: (subject, onMessage) => broker.subscribe(subject, onMessage),
      streamReplicas: broker.streamReplicas,
      close: () => broker.close(),
    };
  }

  /** Stops refreshing and removes this Manager from the record (the last one removes the record). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (!this.holding) return;
    this.holding = false;
    const nc = this.options.broker.connection();
    if (!nc) {
      this.options.logger.warn("not connected to NATS: this Manager's presence record expires by itself", {
        expiresInMs: this.ttlMs,
      });
      return;
    }
    try {
      await this.write(nc, (held) => {
        if (!held || held.installationId !== this.installationId) return "keep";
        const rest = held.managers.filter((m) => m.instanceId !== this.self.instanceId);
        return rest.length > 0 ? { ...held, managers: rest } : "delete";
      });
    } catch (err) {
      this.options.logger.warn("could not remove this Manager's presence record; it expires by itself", {
        err,
        expiresInMs: this.ttlMs,
      });
    }
  }

  private tick(): void {
    this.running = this.refresh().then((failed) => {
      this.running = undefined;
      if (this.stopped || this.found) return;
      const delayMs = this.holding ? this.refreshMs : failed ? CLAIM_FAILED_RETRY_MS : CLAIM_RETRY_MS;
      this.timer = setTimeout(() => this.tick(), delayMs);
    });
  }

  /** One claim or refresh; true when it failed (NATS or PostgreSQL did not answer as expected). */
  private async refresh(): Promise<boolean> {
    const nc = this.options.broker.connection();
    if (!nc) return false;
    let live: PresenceRecord | undefined;
    let installationId: string;
    try {
      installationId = this.installationId ??= await readInstallationId(this.options.sql);
      await this.write(nc, (held) => {
        if (held && held.installationId !== installationId) {
          live = held;
          return "keep";
        }
        const now = Date.now();
        // Managers of this installation that stopped refreshing died without removing themselves.
        const others = (held?.managers ?? []).filter(
          (m) => m.instanceId !== this.self.instanceId && now - Date.parse(m.refreshedAt) < this.ttlMs,
        );
        return {
          installationId,
          managers: [...others, { ...this.self, refreshedAt: new Date(now).toISOString() }],
        };
      });
    } catch (err) {
      this.opened = undefined;
      this.options.logger.warn("could not refresh this installation's presence record; retrying", { err });
      return true;
    }
    if (live) {
      this.holding = false;
      this.found = new InstallationConflictError(this.options.subjectPrefix, installationId, live);
      this.options.logger.error(this.found.message, { liveInstallation: live });
      this.options.onConflict?.(this.found);
    } else {
      if (!this.holding) this.options.logger.info("holding the subject prefix for this installation");
      this.holding = true;
    }
    for (const wake of this.settledWaiters) wake();
    return false;
  }

  /**
   * Reads the record and writes what `change` makes of it, if nobody wrote in between;
   * otherwise reads again. An unreadable record is treated as no record.
   */
  private async write(
    nc: NatsConnection,
    change: (held: PresenceRecord | undefined) => PresenceRecord | "keep" | "delete",
  ): Promise<void> {
    const kv = await this.bucket(nc);
    for (let round = 0; round < MAX_CONTENDED_WRITES; round++) {
      const entry = await kv.get(PRESENCE_KEY);
      const next = change(entry?.operation === "PUT" ? parseRecord(entry) : undefined);
      if (next === "keep") return;
      if (await compareAndSet(kv, entry, next === "delete" ? undefined : JSON.stringify(next))) return;
    }
    throw new Error(`the presence record changed under ${MAX_CONTENDED_WRITES} writes in a row`);
  }

  private async bucket(nc: NatsConnection): Promise<KV> {
    if (this.opened?.nc === nc) return this.opened.kv;
    const kv = await new Kvm(nc).create(presenceBucket(this.options.subjectPrefix), {
      history: 1,
      ttl: this.ttlMs,
      replicas: this.options.broker.streamReplicas,
    });
    this.opened = { nc, kv };
    return kv;
  }
}

function parseRecord(entry: KvEntry): PresenceRecord | undefined {
  try {
    return PresenceRecordSchema.safeParse(entry.json()).data;
  } catch {
    return undefined;
  }
}

/** Writes (or deletes, for undefined) the key if it is still at `entry`; false when another write came first. */
async function compareAndSet(kv: KV, entry: KvEntry | null, value: string | undefined): Promise<boolean> {
  try {
    if (value === undefined) await kv.delete(PRESENCE_KEY, { previousSeq: entry?.revision ?? 0 });
    else if (entry) await kv.update(PRESENCE_KEY, value, entry.revision);
    else await kv.create(PRESENCE_KEY, value);
    return true;
  } catch (err) {
    const lost =
      err instanceof JetStreamApiError &&
      (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
        err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
    if (lost) return false;
    throw err;
  }
}
