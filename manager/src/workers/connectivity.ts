/**
 * The connectivity rules, without I/O: a Worker is ONLINE while it heartbeats, SUSPECTED
 * after two missed intervals, OFFLINE after WORKER_LOST_AFTER_MS of silence, and ONLINE
 * again with the next heartbeat of its current instance.
 */
import type { Connectivity } from "./store.ts";

export interface ConnectivityTimings {
  heartbeatIntervalMs: number;
  lostAfterMs: number;
}

/** Missed intervals after which a Worker is SUSPECTED. */
export const SUSPECT_AFTER_INTERVALS = 2;

/** The transition silence since `lastHeartbeatAt` calls for at `now`, if any. */
export function silenceTransition(
  connectivity: Connectivity,
  lastHeartbeatAt: number,
  now: number,
  timings: ConnectivityTimings,
): Connectivity | undefined {
  const silence = now - lastHeartbeatAt;
  if (connectivity !== "OFFLINE" && silence >= timings.lostAfterMs) return "OFFLINE";
  if (connectivity === "ONLINE" && silence >= SUSPECT_AFTER_INTERVALS * timings.heartbeatIntervalMs) {
    return "SUSPECTED";
  }
  return undefined;
}

/** When the next silence transition falls due, so a tick can be that precise. */
export function nextDeadline(
  connectivity: Connectivity,
  lastHeartbeatAt: number,
  timings: ConnectivityTimings,
) {
  if (connectivity === "ONLINE")
    return lastHeartbeatAt + SUSPECT_AFTER_INTERVALS * timings.heartbeatIntervalMs;
  if (connectivity === "SUSPECTED") return lastHeartbeatAt + timings.lostAfterMs;
  return Number.POSITIVE_INFINITY;
}

export type HeartbeatVerdict =
  | { accept: true }
  | { accept: false; reason: "subject-mismatch" | "unknown-worker" | "stale-instance" | "replayed" };

/**
 * Whether a heartbeat (already schema-valid) counts. The subject is what NATS permissions
 * vouch for, so a body naming another Worker is refused; an old instance's heartbeats and
 * ones not newer than the last accepted (a replay) change nothing.
 */
export function judgeHeartbeat(
  heartbeat: { workerId: string; instanceId: string; sentAt: string },
  subjectWorkerId: string,
  known: { instanceId: string; lastSentAt: string | undefined } | undefined,
): HeartbeatVerdict {
  if (heartbeat.workerId !== subjectWorkerId) return { accept: false, reason: "subject-mismatch" };
  if (!known) return { accept: false, reason: "unknown-worker" };
  if (heartbeat.instanceId !== known.instanceId) return { accept: false, reason: "stale-instance" };
  if (known.lastSentAt !== undefined && Date.parse(heartbeat.sentAt) <= Date.parse(known.lastSentAt)) {
    return { accept: false, reason: "replayed" };
  }
  return { accept: true };
}
