/**
 * Scale-out: submit throughput of one Manager and of two on the same schema (one PostgreSQL),
 * at the same total concurrency. Both Managers (`npm run manager` on Node) stay up throughout;
 * "one" sends every client to Manager A (B idle), "two" pins client i to Manager i mod 2: half
 * each, as the compose gateway (HAProxy in TCP mode) balances keep-alive connections. Every
 * round measures both at each level, who goes first alternating per round, and reads the CPU
 * of each Manager, of PostgreSQL, of the bench and of the whole machine meanwhile: on a small
 * machine they all share the cores, and that is what bounds the ratio.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import type { Attempt, BenchContext } from "../scenario.ts";
import { loadOptions } from "../settings.ts";
import { JOBS_PATH } from "../shared/api.ts";
import { checkpoint } from "../shared/database.ts";
import { closedLoop, HttpClient, type LoadOptions, type LoadResult } from "../shared/load.ts";
import { createProject, freshManagerSchema, startManager } from "../shared/manager-process.ts";
import {
  cpuSeconds,
  findProcessTree,
  machineCpuSeconds,
  type ProcessTree,
  processesNamed,
} from "../shared/proc.ts";

export const REPLICA_COUNTS = ["one", "two"] as const;
export type ReplicaCount = (typeof REPLICA_COUNTS)[number];

/** Names each Manager's processes: both share the schema, so it cannot tell them apart. */
const REPLICA_MARKER = "TJM_BENCH_REPLICA";

/** Cores busy on average while a measurement ran (its warm-up and measured seconds: the same load). */
export interface CoresBusy {
  managerA: number;
  managerB: number;
  /** Every postgres process on the machine (whoever else's backends too). */
  postgres: number;
  /** The load generator: this process. */
  bench: number;
  machine: number;
}

export interface ScaleOutMeasurement {
  load: LoadResult;
  cores: CoresBusy;
}

export interface ScaleOutRound {
  oneFirst: boolean;
  one: ScaleOutMeasurement | undefined;
  two: ScaleOutMeasurement | undefined;
}

export interface ScaleOutLevel {
  concurrency: number;
  rounds: ScaleOutRound[];
}

export interface ScaleOutResult {
  levels: ScaleOutLevel[];
  /** The machine's cores, what `machine` is a share of. */
  cores: number;
}

interface CpuReading {
  managerA: number;
  managerB: number;
  postgres: Map<number, number>;
  bench: number;
  machine: { busy: number; total: number };
  atMs: number;
}

function readCpu(a: ProcessTree, b: ProcessTree): CpuReading {
  const usage = process.cpuUsage();
  return {
    managerA: cpuSeconds(a.pids),
    managerB: cpuSeconds(b.pids),
    // Per process, so that backends started during the measurement count from zero.
    postgres: new Map(processesNamed("postgres").map((pid) => [pid, cpuSeconds([pid])])),
    bench: (usage.user + usage.system) / 1e6,
    machine: machineCpuSeconds(),
    atMs: performance.now(),
  };
}

function coresBusy(before: CpuReading, after: CpuReading, cores: number): CoresBusy {
  const wall = (after.atMs - before.atMs) / 1000;
  let postgres = 0;
  for (const [pid, used] of after.postgres) postgres += used - (before.postgres.get(pid) ?? 0);
  const machineTotal = after.machine.total - before.machine.total;
  return {
    managerA: (after.managerA - before.managerA) / wall,
    managerB: (after.managerB - before.managerB) / wall,
    postgres: postgres / wall,
    bench: (after.bench - before.bench) / wall,
    machine: ((after.machine.busy - before.machine.busy) / machineTotal) * cores,
  };
}

interface Replicas {
  baseUrls: [string, string];
  trees: [ProcessTree, ProcessTree];
  body: Buffer;
  stop(): Promise<void>;
}

/** Two Managers on one fresh schema with one project, alike but for their port. */
async function startReplicas(context: BenchContext): Promise<Replicas> {
  const { schema, env } = await freshManagerSchema(context, "scale_out");
  const { projectId } = await createProject(env, "bench", "bench");
  // Replicas of one deployment share their secrets; the bench's environment draws one per Manager.
  const enrollmentSecret = randomBytes(32).toString("hex");
  const start = (replica: "a" | "b") =>
    startManager("node", env, context.cleanup, {
      ENROLLMENT_TOKEN_SECRET: enrollmentSecret,
      [REPLICA_MARKER]: `${schema}_${replica}`,
    });
  const managers = [await start("a"), await start("b")] as const;
  return {
    baseUrls: [managers[0].baseUrl, managers[1].baseUrl],
    trees: [findProcessTree(REPLICA_MARKER, `${schema}_a`), findProcessTree(REPLICA_MARKER, `${schema}_b`)],
    body: Buffer.from(JSON.stringify(sampleSubmission(projectId))),
    async stop() {
      await Promise.all(managers.map((manager) => manager.stop()));
    },
  };
}

async function measure(
  context: BenchContext,
  replicas: Replicas,
  count: ReplicaCount,
  options: LoadOptions,
): Promise<ScaleOutMeasurement> {
  const targets = count === "one" ? replicas.baseUrls.slice(0, 1) : replicas.baseUrls;
  const clients = targets.map(
    (baseUrl) => new HttpClient(baseUrl, context.token, Math.ceil(options.concurrency / targets.length)),
  );
  const cores = os.cpus().length;
  const [a, b] = replicas.trees;
  try {
    const before = readCpu(a, b);
    const load = await closedLoop(
      (caller) =>
        (clients[caller % clients.length] as HttpClient).expect(201, "POST", JOBS_PATH, replicas.body),
      options,
    );
    return { load, cores: coresBusy(before, readCpu(a, b), cores) };
  } finally {
    for (const client of clients) client.close();
  }
}

export async function benchScaleOut(context: BenchContext, attempt: Attempt): Promise<ScaleOutResult> {
  const replicas = await startReplicas(context);
  try {
    const levels: ScaleOutLevel[] = context.settings.submit.concurrency.map((concurrency) => ({
      concurrency,
      rounds: [],
    }));
    for (let round = 1; round <= context.settings.scaleOut.rounds; round++) {
      const order = round % 2 === 1 ? (["one", "two"] as const) : (["two", "one"] as const);
      for (const level of levels) {
        const measured: ScaleOutRound = { oneFirst: order[0] === "one", one: undefined, two: undefined };
        const options = loadOptions(context.settings, level.concurrency, context.settings.submit.seconds);
        for (const count of order) {
          await checkpoint(context.admin, context.log);
          measured[count] = await attempt(`scale-out ${count} x${level.concurrency} round ${round}`, () =>
            measure(context, replicas, count, options),
          );
          const result = measured[count];
          context.log(
            `scale-out ${count} x${level.concurrency} round ${round}: ${result?.load.perSecond.toFixed(0) ?? "n/a"} jobs/s, machine ${result?.cores.machine.toFixed(2) ?? "n/a"} cores busy`,
          );
        }
        level.rounds.push(measured);
      }
    }
    return { levels, cores: os.cpus().length };
  } finally {
    await replicas.stop();
  }
}
