import type postgres from "postgres";
import type { Cleanup } from "./cleanup.ts";
import type { LoadOptions } from "./load.ts";
import type { ManagerRuntime } from "./manager-process.ts";

export interface Settings {
  /** Measured seconds per throughput level. */
  seconds: number;
  /** Unmeasured seconds before each level and each list filter. */
  warmupSeconds: number;
  concurrency: number[];
  runtimes: ManagerRuntime[];
  listSizes: number[];
  /** Measured seconds per list filter (one client, so latency is not queueing). */
  listSeconds: number;
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

export function readSettings(env: NodeJS.ProcessEnv): Settings {
  const runtimes = (env.BENCH_RUNTIMES || "node,deno").split(",").map((part) => part.trim());
  const unknown = runtimes.filter((runtime) => runtime !== "node" && runtime !== "deno");
  if (unknown.length > 0) throw new Error(`BENCH_RUNTIMES may name node and deno, not ${unknown.join(", ")}`);
  return {
    seconds: positiveNumber(env, "BENCH_SECONDS", "5"),
    warmupSeconds: positiveNumber(env, "BENCH_WARMUP_SECONDS", "2"),
    concurrency: positiveNumbers(env, "BENCH_CONCURRENCY", "1,16,64").map(Math.round),
    runtimes: runtimes as ManagerRuntime[],
    listSizes: positiveNumbers(env, "BENCH_LIST_SIZES", "100000,1000000")
      .map(Math.round)
      .sort((a, b) => a - b),
    listSeconds: positiveNumber(env, "BENCH_LIST_SECONDS", "3"),
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
