import { positiveInteger, positiveNumber } from "../shared/env.ts";

export interface HeartbeatSettings {
  /** Simulated Workers registered through the real route. */
  workers: number;
  /** The Manager's HEARTBEAT_INTERVAL_MS; each Worker heartbeats at this period. */
  intervalMs: number;
  /** The Manager's WORKER_LOST_AFTER_MS. */
  lostAfterMs: number;
  /** Measured seconds of steady heartbeating (the CPU window). */
  seconds: number;
  /** Workers that stop heartbeating after the window, to time SUSPECTED and OFFLINE. */
  stopped: number;
  /** NATS connections the heartbeats are spread over. */
  connections: number;
  /** Registrations in flight at once. */
  registrationConcurrency: number;
}

export function readHeartbeatSettings(env: NodeJS.ProcessEnv): HeartbeatSettings {
  const settings: HeartbeatSettings = {
    workers: positiveInteger(env, "BENCH_HEARTBEAT_WORKERS", "1000"),
    intervalMs: positiveInteger(env, "BENCH_HEARTBEAT_INTERVAL_MS", "1000"),
    lostAfterMs: positiveInteger(env, "BENCH_WORKER_LOST_AFTER_MS", "5000"),
    seconds: positiveNumber(env, "BENCH_HEARTBEAT_SECONDS", "20"),
    stopped: positiveInteger(env, "BENCH_HEARTBEAT_STOPPED", "100"),
    connections: positiveInteger(env, "BENCH_HEARTBEAT_CONNECTIONS", "4"),
    registrationConcurrency: positiveInteger(env, "BENCH_REGISTRATION_CONCURRENCY", "16"),
  };
  if (settings.stopped >= settings.workers)
    throw new Error("BENCH_HEARTBEAT_STOPPED must be below BENCH_HEARTBEAT_WORKERS");
  if (settings.lostAfterMs <= 2 * settings.intervalMs)
    throw new Error("BENCH_WORKER_LOST_AFTER_MS must exceed two BENCH_HEARTBEAT_INTERVAL_MS");
  return settings;
}
