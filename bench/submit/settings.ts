import { execFileSync } from "node:child_process";
import { configSchema } from "../../manager/src/config.ts";
import { positiveNumber, positiveNumbers } from "../shared/env.ts";

/** Managers the submit scenario compares: the npm scripts' runtimes, and the Node entrypoint on Node 20. */
export const BENCH_RUNTIMES = ["node", "deno", "node20"] as const;
export type BenchRuntime = (typeof BENCH_RUNTIMES)[number];

export interface SubmitSettings {
  /** Measured seconds per throughput level. */
  seconds: number;
  /** Concurrent clients (callers) per level. */
  concurrency: number[];
  runtimes: BenchRuntime[];
  /** A Node 20 binary for the `node20` contender (the machine's system Node, where it is 20). */
  node20Path: string | undefined;
  /** The Managers' DATABASE_POOL_MAX (their default unless set); pg-boss gets the same. */
  managerPoolMax: number;
}

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

export function readSubmitSettings(env: NodeJS.ProcessEnv): SubmitSettings {
  const node20Path = findNode20(env);
  return {
    seconds: positiveNumber(env, "BENCH_SECONDS", "5"),
    concurrency: positiveNumbers(env, "BENCH_CONCURRENCY", "1,16,64").map(Math.round),
    runtimes: readRuntimes(env, node20Path),
    node20Path,
    managerPoolMax: configSchema.shape.DATABASE_POOL_MAX.parse(env.DATABASE_POOL_MAX),
  };
}
