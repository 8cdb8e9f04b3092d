import type { Certification, HardwareEncoderProbe } from "@tjm/protocol";
import type postgres from "postgres";
import { enqueueOutbox } from "../outbox/index.ts";
import type { Sql, TransactionSql } from "../platform/db.ts";

/**
 * What other features do when a Worker's life changes, in the same transaction: execution
 * fails the attempts a lost Worker held (WORKER_LOST) and hands a restarted Worker the ones
 * it can still finish.
 */
export interface WorkerLifecycleHooks {
  offline(tx: TransactionSql, workerId: string): Promise<void>;
  instanceStarted(
    tx: TransactionSql,
    worker: { workerId: string; instanceId: string },
    resumableAttempts: readonly { attemptId: string; fencingToken: string }[],
  ): Promise<string[]>;
  /** An operator disabled the Worker: nothing it holds can finish (it gets no more commands). */
  disabled(tx: TransactionSql, workerId: string): Promise<void>;
  /** An operator asked the Worker to drain: it is drained at once if it holds nothing. */
  drainRequested(tx: TransactionSql, workerId: string): Promise<void>;
}

export const CONNECTIVITY_STATES = ["ONLINE", "SUSPECTED", "OFFLINE"] as const;
export type Connectivity = (typeof CONNECTIVITY_STATES)[number];

export interface WorkerRow {
  id: string;
  publicKey: string;
  name: string;
  pool: string;
  protocolVersion: number;
  instanceId: string;
  hostCapacity: number;
  capacityCap: number | null;
  certification: Certification["status"];
  certificationReasons: string[];
  capabilities: string[];
  hardwareEncoders: HardwareEncoderProbe[];
  ffmpegVersion: string;
  connectivity: Connectivity;
  connectivityChangedAt: Date;
  lastHeartbeatAt: Date | null;
  drainRequestedAt: Date | null;
  drainedAt: Date | null;
  disabledAt: Date | null;
  disabledBy: string | null;
  registeredAt: Date;
  instanceStartedAt: Date;
  updatedAt: Date;
}

/** What a Worker says about itself at each (re-)registration. */
export interface WorkerDescription {
  name: string;
  pool: string;
  protocolVersion: number;
  hostCapacity: number;
  capacityCap: number | null;
  certification: Certification;
  capabilities: string[];
  hardwareEncoders: HardwareEncoderProbe[];
  ffmpegVersion: string;
}

export async function insertWorker(
  tx: TransactionSql,
  worker: WorkerDescription & {
    id: string;
    publicKey: string;
    instanceId: string;
    enrollmentTokenId: string;
  },
): Promise<WorkerRow> {
  const [row] = await tx<WorkerRow[]>`
    insert into workers (
      id, public_key, name, pool, protocol_version, instance_id, enrollment_token_id,
      host_capacity, capacity_cap, certification, certification_reasons, capabilities,
      hardware_encoders, ffmpeg_version, connectivity, connectivity_changed_at,
      last_heartbeat_at, registered_at, instance_started_at, updated_at)
    values (
      ${worker.id}, ${worker.publicKey}, ${worker.name}, ${worker.pool}, ${worker.protocolVersion},
      ${worker.instanceId}, ${worker.enrollmentTokenId}, ${worker.hostCapacity}, ${worker.capacityCap},
      ${worker.certification.status}, ${tx.json(worker.certification.reasons)}, ${worker.capabilities},
      ${tx.json(worker.hardwareEncoders as never)}, ${worker.ffmpegVersion}, 'ONLINE', now(),
      now(), now(), now(), now())
    returning *`;
  return row as WorkerRow;
}

/** A new instance of a known Worker: its new description, ONLINE from now. */
export async function startWorkerInstance(
  tx: TransactionSql,
  workerId: string,
  instanceId: string,
  worker: WorkerDescription,
): Promise<{ row: WorkerRow; previousConnectivity: Connectivity }> {
  const [row] = await tx<(WorkerRow & { previousConnectivity: Connectivity })[]>`
    update workers w set
      instance_id = ${instanceId}, name = ${worker.name}, protocol_version = ${worker.protocolVersion},
      host_capacity = ${worker.hostCapacity}, capacity_cap = ${worker.capacityCap},
      certification = ${worker.certification.status},
      certification_reasons = ${tx.json(worker.certification.reasons)},
      capabilities = ${worker.capabilities}, hardware_encoders = ${tx.json(worker.hardwareEncoders as never)},
      ffmpeg_version = ${worker.ffmpegVersion},
      connectivity = 'ONLINE',
      connectivity_changed_at = case when w.connectivity = 'ONLINE' then w.connectivity_changed_at else now() end,
      last_heartbeat_at = now(), instance_started_at = now(), updated_at = now()
    from (select id, connectivity from workers where id = ${workerId} for update) previous
    where w.id = previous.id
    returning w.*, previous.connectivity as previous_connectivity`;
  const { previousConnectivity, ...updated } = row as WorkerRow & { previousConnectivity: Connectivity };
  return { row: updated, previousConnectivity };
}

async function findWorkerWhere(
  sql: Sql | TransactionSql,
  condition: postgres.Fragment,
): Promise<WorkerRow | undefined> {
  const [row] = await sql<WorkerRow[]>`select * from workers where ${condition}`;
  return row;
}

export function findWorker(sql: Sql | TransactionSql, workerId: string): Promise<WorkerRow | undefined> {
  return findWorkerWhere(sql, sql`id = ${workerId}`);
}

export function findWorkerByPublicKey(
  sql: Sql | TransactionSql,
  publicKey: string,
): Promise<WorkerRow | undefined> {
  return findWorkerWhere(sql, sql`public_key = ${publicKey}`);
}

export interface WorkerFilter {
  connectivity?: Connectivity | undefined;
  pool?: string | undefined;
  certification?: string | undefined;
  draining?: boolean | undefined;
}

function whereWorkers(sql: Sql, filter: WorkerFilter) {
  const draining =
    filter.draining === undefined
      ? sql`true`
      : filter.draining
        ? sql`drain_requested_at is not null`
        : sql`drain_requested_at is null`;
  return sql`
    where (${filter.connectivity ?? null}::text is null or connectivity = ${filter.connectivity ?? null})
      and (${filter.pool ?? null}::text is null or pool = ${filter.pool ?? null})
      and (${filter.certification ?? null}::text is null or certification = ${filter.certification ?? null})
      and ${draining}`;
}

/** Newest registration first, with the number of Workers matching the filter. */
export async function listWorkers(
  sql: Sql,
  filter: WorkerFilter,
  limit: number,
  offset: number,
): Promise<{ rows: WorkerRow[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    sql<WorkerRow[]>`
      select * from workers ${whereWorkers(sql, filter)}
      order by registered_at desc, id desc limit ${limit} offset ${offset}`,
    sql<{ total: number }[]>`select count(*)::int as total from workers ${whereWorkers(sql, filter)}`,
  ]);
  return { rows, total: count?.total ?? 0 };
}

/** Every Worker not OFFLINE: where a Manager starts watching heartbeats. */
export async function listConnectedWorkers(sql: Sql): Promise<WorkerRow[]> {
  return sql<WorkerRow[]>`select * from workers where connectivity <> 'OFFLINE'`;
}

export async function insertChallenge(
  sql: Sql,
  challenge: { id: string; workerId: string; purpose: string; nonce: string; ttlSeconds: number },
): Promise<{ expiresAt: Date }> {
  const [row] = await sql<{ expiresAt: Date }[]>`
    insert into worker_challenges (id, worker_id, purpose, nonce, expires_at)
    values (${challenge.id}, ${challenge.workerId}, ${challenge.purpose}, ${challenge.nonce},
            now() + make_interval(secs => ${challenge.ttlSeconds}))
    returning expires_at`;
  return row as { expiresAt: Date };
}

/** Uses the challenge once: its nonce when it is this Worker's, for this purpose, unused and unexpired. */
export async function consumeChallenge(
  tx: TransactionSql,
  challengeId: string,
  workerId: string,
  purpose: string,
): Promise<{ nonce: string } | undefined> {
  const [row] = await tx<{ nonce: string }[]>`
    update worker_challenges set used_at = now()
    where id = ${challengeId} and worker_id = ${workerId} and purpose = ${purpose}
      and used_at is null and expires_at > now()
    returning nonce`;
  return row;
}

/**
 * Compare-and-set of a Worker's connectivity: applies only if the Worker still runs
 * `instanceId` and is still `from`, so of several Manager replicas seeing the same deadline
 * exactly one records the transition (and its event).
 */
export async function transitionConnectivity(
  sql: Sql,
  hooks: WorkerLifecycleHooks,
  change: {
    workerId: string;
    instanceId: string;
    from: Connectivity;
    to: Connectivity;
    lastHeartbeatAt: Date | undefined;
  },
): Promise<WorkerRow | undefined> {
  return sql.begin(async (tx) => {
    const [row] = await tx<WorkerRow[]>`
      update workers set connectivity = ${change.to}, connectivity_changed_at = now(),
        last_heartbeat_at = greatest(last_heartbeat_at, ${change.lastHeartbeatAt ?? null}::timestamptz), updated_at = now()
      where id = ${change.workerId} and instance_id = ${change.instanceId} and connectivity = ${change.from}
      returning *`;
    if (!row) return undefined;
    await announceWorkerChange(tx, row, "connectivity", { from: change.from, to: change.to });
    if (change.to === "OFFLINE") await hooks.offline(tx, row.id);
    return row;
  });
}

/**
 * Stamps the Worker's `column` with now() the first time only, setting `alongside` with it;
 * whether this call was that first time. Undefined when the Worker does not exist.
 */
async function stampOnce(
  tx: TransactionSql,
  workerId: string,
  column: "drain_requested_at" | "disabled_at",
  alongside?: postgres.Fragment,
): Promise<{ row: WorkerRow; changed: boolean } | undefined> {
  const stamp = tx(column);
  const [row] = await tx<(WorkerRow & { changed: boolean })[]>`
    update workers w set ${stamp} = coalesce(w.${stamp}, now()), ${alongside ? tx`${alongside},` : tx``}
      updated_at = case when w.${stamp} is null then now() else w.updated_at end
    from (select id, ${stamp} is null as changed from workers where id = ${workerId} for update) previous
    where w.id = previous.id
    returning w.*, previous.changed`;
  if (!row) return undefined;
  const { changed, ...worker } = row;
  return { row: worker, changed };
}

/** Sets the drain request once; undefined when the Worker does not exist. */
export function requestDrain(tx: TransactionSql, workerId: string) {
  return stampOnce(tx, workerId, "drain_requested_at");
}

/**
 * Ends a Worker's drain (drained or not) unless it is disabled; what stood in the way
 * otherwise. The row lock orders it with a concurrent drain, disable or lease.
 */
export async function endDrain(
  tx: TransactionSql,
  workerId: string,
): Promise<{ kind: "ended"; row: WorkerRow } | { kind: "unknown" | "not-draining" | "disabled" }> {
  const [current] = await tx<{ drainRequestedAt: Date | null; disabledAt: Date | null }[]>`
    select drain_requested_at, disabled_at from workers where id = ${workerId} for update`;
  if (!current) return { kind: "unknown" };
  if (current.disabledAt) return { kind: "disabled" };
  if (!current.drainRequestedAt) return { kind: "not-draining" };
  const [row] = await tx<WorkerRow[]>`
    update workers set drain_requested_at = null, drained_at = null, updated_at = now()
    where id = ${workerId} returning *`;
  return { kind: "ended", row: row as WorkerRow };
}

/** Disables the Worker once; undefined when it does not exist. */
export function disableWorker(tx: TransactionSql, workerId: string, operator: string) {
  return stampOnce(tx, workerId, "disabled_at", tx`disabled_by = coalesce(w.disabled_by, ${operator})`);
}

/** The worker.updated announcement of a change of the Worker's current instance. */
export async function announceWorkerChange(
  tx: TransactionSql,
  worker: { id: string; instanceId: string },
  change: "connectivity" | "instance" | "drain" | "undrain" | "disable",
  details: Record<string, unknown>,
): Promise<void> {
  await enqueueOutbox(tx, "worker.updated", {
    workerId: worker.id,
    instanceId: worker.instanceId,
    change,
    ...details,
  });
}

/** Workers that have a command consumer: every one not disabled. */
export async function listCommandedWorkerIds(sql: Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`select id from workers where disabled_at is null`;
  return rows.map((row) => row.id);
}

/** Which of these Workers are disabled by now. */
export async function disabledWorkerIds(sql: Sql, workerIds: readonly string[]): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from workers where id = any(${workerIds as string[]}::uuid[]) and disabled_at is not null`;
  return rows.map((row) => row.id);
}
