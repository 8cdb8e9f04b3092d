import { execFileSync } from "node:child_process";
import type postgres from "postgres";
import type { Cleanup } from "./cleanup.ts";
import type { LoadOptions } from "./load.ts";
import type { UploadSettings } from "./upload.ts";

export const SCENARIOS = [
  "submit",
  "list",
  "relay",
  "heartbeats",
  "sse",
  "overhead",
  "dispatch",
  "tiny-jobs",
  "upload",
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Managers the submit scenario compares: the npm scripts' runtimes, and the Node entrypoint on Node 20. */
export const BENCH_RUNTIMES = ["node", "deno", "node20"] as const;
export type BenchRuntime = (typeof BENCH_RUNTIMES)[number];

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

export interface SseSettings {
  /** Concurrent subscribers per level, one level after the other on the same Manager. */
  subscribers: number[];
  /** Jobs submitted per level, each announcing one event. */
  jobs: number;
  jobsPerSecond: number;
  /** Subscriber sockets per child process. */
  perProcess: number;
}

export interface ExecutionSettings {
  /** Runs of each contender (plain ffmpeg, TJM job) in the overhead scenario; medians are reported. */
  overheadRuns: number;
  /** Length of the overhead scenario's 720p clip. */
  overheadClipSeconds: number;
  /** Measured one-second jobs in the dispatch scenario, run one at a time. */
  dispatchJobs: number;
  /** One-second jobs in the tiny-jobs scenario. */
  tinyJobs: number;
  /** Worker agents (WORKER_CAPACITY=1 each) in the tiny-jobs scenario. */
  tinyWorkers: number;
}

export interface Settings {
  /** Which scenarios run, in the order of SCENARIOS. */
  scenarios: ScenarioName[];
  /** Measured seconds per throughput level. */
  seconds: number;
  /** Unmeasured seconds before each level and each list filter. */
  warmupSeconds: number;
  concurrency: number[];
  runtimes: BenchRuntime[];
  /** A Node 20 binary for the `node20` contender (the machine's system Node, where it is 20). */
  node20Path: string | undefined;
  listSizes: number[];
  /** Measured seconds per list filter (one client, so latency is not queueing). */
  listSeconds: number;
  heartbeats: HeartbeatSettings;
  sse: SseSettings;
  execution: ExecutionSettings;
  upload: UploadSettings;
}

function positiveNumbers(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const raw = env[name] || fallback;
  const values = raw.split(",").map((part) => Number(part.trim()));
  if (values.length === 0 || values.some((value) => !Number.isFinite(value) || value <= 0))
    throw new Error(`${name} must be positive numbers separated by commas, not "${raw}"`);
  return values;
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const [value, ...rest] = positiveNumbers(env, name, fallback);
  if (value === undefined || rest.length > 0) throw new Error(`${name} must be one positive number`);
  return value;
}

function readScenarios(env: NodeJS.ProcessEnv): ScenarioName[] {
  const named = (env.BENCH_SCENARIOS || SCENARIOS.join(",")).split(",").map((part) => part.trim());
  const unknown = named.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0 || named.length === 0)
    throw new Error(`BENCH_SCENARIOS may name ${SCENARIOS.join(", ")}, not "${unknown.join(", ")}"`);
  return SCENARIOS.filter((name) => named.includes(name));
}

const positiveInteger = (env: NodeJS.ProcessEnv, name: string, fallback: string) =>
  Math.round(positiveNumber(env, name, fallback));

function nodeMajorOf(binary: string): number | undefined {
  try {
    const version = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
    return Number(/^v(\d+)\./.exec(version)?.[1]);
  } catch {
    return undefined;
  }
}

/** BENCH_NODE20_PATH, or the system's `node` when it is Node 20 (npm scripts run the pinned Node 24). */
function findNode20(env: NodeJS.ProcessEnv): string | undefined {
  const candidate = env.BENCH_NODE20_PATH || "/usr/bin/node";
  const major = nodeMajorOf(candidate);
  if (major === 20) return candidate;
  if (env.BENCH_NODE20_PATH)
    throw new Error(`BENCH_NODE20_PATH must name a Node 20 binary; ${candidate} is ${major ?? "not Node"}`);
  return undefined;
}

function readRuntimes(env: NodeJS.ProcessEnv, node20Path: string | undefined): BenchRuntime[] {
  const fallback = node20Path ? "node,deno,node20" : "node,deno";
  const runtimes = (env.BENCH_RUNTIMES || fallback).split(",").map((part) => part.trim());
  const unknown = runtimes.filter((runtime) => !(BENCH_RUNTIMES as readonly string[]).includes(runtime));
  if (unknown.length > 0)
    throw new Error(`BENCH_RUNTIMES may name ${BENCH_RUNTIMES.join(", ")}, not ${unknown.join(", ")}`);
  if (runtimes.includes("node20") && !node20Path)
    throw new Error("BENCH_RUNTIMES names node20, but no Node 20 was found: set BENCH_NODE20_PATH");
  return runtimes as BenchRuntime[];
}

export function readSettings(env: NodeJS.ProcessEnv): Settings {
  const node20Path = findNode20(env);
  const runtimes = readRuntimes(env, node20Path);
  const heartbeats: HeartbeatSettings = {
    workers: positiveInteger(env, "BENCH_HEARTBEAT_WORKERS", "1000"),
    intervalMs: positiveInteger(env, "BENCH_HEARTBEAT_INTERVAL_MS", "1000"),
    lostAfterMs: positiveInteger(env, "BENCH_WORKER_LOST_AFTER_MS", "5000"),
    seconds: positiveNumber(env, "BENCH_HEARTBEAT_SECONDS", "20"),
    stopped: positiveInteger(env, "BENCH_HEARTBEAT_STOPPED", "100"),
    connections: positiveInteger(env, "BENCH_HEARTBEAT_CONNECTIONS", "4"),
    registrationConcurrency: positiveInteger(env, "BENCH_REGISTRATION_CONCURRENCY", "16"),
  };
  if (heartbeats.stopped >= heartbeats.workers)
    throw new Error("BENCH_HEARTBEAT_STOPPED must be below BENCH_HEARTBEAT_WORKERS");
  if (heartbeats.lostAfterMs <= 2 * heartbeats.intervalMs)
    throw new Error("BENCH_WORKER_LOST_AFTER_MS must exceed two BENCH_HEARTBEAT_INTERVAL_MS");
  return {
    scenarios: readScenarios(env),
    seconds: positiveNumber(env, "BENCH_SECONDS", "5"),
    warmupSeconds: positiveNumber(env, "BENCH_WARMUP_SECONDS", "2"),
    concurrency: positiveNumbers(env, "BENCH_CONCURRENCY", "1,16,64").map(Math.round),
    runtimes,
    node20Path,
    listSizes: positiveNumbers(env, "BENCH_LIST_SIZES", "100000,1000000")
      .map(Math.round)
      .sort((a, b) => a - b),
    listSeconds: positiveNumber(env, "BENCH_LIST_SECONDS", "3"),
    heartbeats,
    sse: {
      subscribers: positiveNumbers(env, "BENCH_SSE_SUBSCRIBERS", "1000,10000").map(Math.round),
      jobs: positiveInteger(env, "BENCH_SSE_JOBS", "20"),
      jobsPerSecond: positiveNumber(env, "BENCH_SSE_JOBS_PER_SECOND", "5"),
      perProcess: positiveInteger(env, "BENCH_SSE_PER_PROCESS", "2500"),
    },
    execution: {
      overheadRuns: positiveInteger(env, "BENCH_OVERHEAD_RUNS", "3"),
      overheadClipSeconds: positiveInteger(env, "BENCH_OVERHEAD_SECONDS", "60"),
      dispatchJobs: positiveInteger(env, "BENCH_DISPATCH_JOBS", "50"),
      tinyJobs: positiveInteger(env, "BENCH_TINY_JOBS", "1000"),
      tinyWorkers: positiveInteger(env, "BENCH_TINY_WORKERS", "4"),
    },
    upload: {
      fileMiB: positiveInteger(env, "BENCH_UPLOAD_MIB", "1024"),
      partSizesMiB: positiveNumbers(env, "BENCH_UPLOAD_PART_SIZES_MIB", "8,16,32,64").map(Math.round),
      concurrencies: positiveNumbers(env, "BENCH_UPLOAD_CONCURRENCY", "2,4,8").map(Math.round),
      runs: positiveInteger(env, "BENCH_UPLOAD_RUNS", "2"),
    },
  };
}

export function loadOptions(
  settings: Settings,
  concurrency: number,
  seconds = settings.seconds,
): LoadOptions {
  return { concurrency, warmupMs: settings.warmupSeconds * 1000, durationMs: seconds * 1000 };
}

/** What every scenario needs: the services, the operator token and where to clean up. */
export interface BenchContext {
  settings: Settings;
  databaseUrl: string;
  natsUrl: string;
  issuerUrl: string;
  /** One long-lived operator token, reused by every request. */
  token: string;
  /** Suffix of this run's schema names, so concurrent or crashed runs never collide. */
  runId: string;
  admin: postgres.Sql;
  cleanup: Cleanup;
  log: (line: string) => void;
}
