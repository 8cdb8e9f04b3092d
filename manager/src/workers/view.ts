import type { WorkersDeps } from "./deps.ts";
import type { LiveWorker } from "./monitor.ts";
import type { WorkerRow } from "./store.ts";

/** One attempt's live encoding figures, from the Worker's progress updates. */
export interface WorkerStatistic {
  attemptId: string;
  jobId: string;
  percent: number;
  fps: number | null;
  bitrateKbps: number | null;
  speed: number | null;
  etaSeconds: number | null;
  at: string;
}

/** A Worker as the API shows it: the stored record plus what this Manager heard lately. */
export function toWorker(row: WorkerRow, live: LiveWorker | undefined, statistics: WorkerStatistic[]) {
  const conditions: { type: "DRAINING" | "DRAINED" | "DISABLED"; since: string }[] = [];
  if (row.drainRequestedAt) conditions.push({ type: "DRAINING", since: row.drainRequestedAt.toISOString() });
  if (row.drainedAt) conditions.push({ type: "DRAINED", since: row.drainedAt.toISOString() });
  if (row.disabledAt) conditions.push({ type: "DISABLED", since: row.disabledAt.toISOString() });
  const lastHeartbeatAt = live?.lastHeartbeatAt ?? row.lastHeartbeatAt;
  return {
    workerId: row.id,
    instanceId: row.instanceId,
    name: row.name,
    pool: row.pool as "cpu" | "nvidia" | "intel" | "amd",
    protocolVersion: row.protocolVersion,
    connectivity: row.connectivity,
    connectivityChangedAt: row.connectivityChangedAt.toISOString(),
    certification: { status: row.certification, reasons: row.certificationReasons },
    conditions,
    capacity: Math.min(row.hostCapacity, row.capacityCap ?? row.hostCapacity),
    profile: { hostCapacity: row.hostCapacity, capacityCap: row.capacityCap },
    capabilities: row.capabilities,
    hardwareEncoders: row.hardwareEncoders,
    ffmpegVersion: row.ffmpegVersion,
    lastHeartbeatAt: lastHeartbeatAt ? lastHeartbeatAt.toISOString() : null,
    activeAttempts: live?.lastHeartbeatAt ? live.activeAttempts : null,
    freeCapacity: live?.freeCapacity ?? null,
    statistics,
    registeredAt: row.registeredAt.toISOString(),
    instanceStartedAt: row.instanceStartedAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** toWorker with what this Manager knows live of the Worker. */
export function showWorker(deps: Pick<WorkersDeps, "monitor" | "statistics">, row: WorkerRow) {
  return toWorker(row, deps.monitor.live(row.id), deps.statistics(row.id));
}
