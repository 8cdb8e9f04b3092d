/**
 * Tiny jobs: BENCH_TINY_JOBS one-second jobs (144p, "fastest", one output) submitted at once
 * to one Manager on Node and run by BENCH_TINY_WORKERS Worker agents with one slot each.
 * Jobs per second from the first submit to the last job COMPLETED, and where the CPU went
 * meanwhile: the Manager's node process as a share of one core (read from /proc like the
 * heartbeat scenario), the agents, the ffmpeg and ffprobe runs they finished, s3rver, this
 * process, and the whole machine.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { BenchContext } from "../scenario.ts";
import { startCluster, wallNow } from "../shared/cluster.ts";
import {
  cpuSeconds,
  machineCpuSeconds,
  processesNamed,
  reapedChildrenCpuSeconds,
  rssBytes,
} from "../shared/proc.ts";
import { type Spread, spread } from "../shared/stats.ts";
import { tinyPlan, uploadTinyClip } from "../shared/tiny-job.ts";

export interface TinyJobsResult {
  jobs: number;
  workers: number;
  completed: number;
  failed: number;
  /** Jobs that needed more than one attempt. */
  retried: number;
  /** Failed attempts by failure code. */
  failedAttempts: string[];
  /** Time to submit every job (8 clients). */
  submitSeconds: number;
  /** First submit to the last jobs.completed_at. */
  elapsedSeconds: number;
  jobsPerSecond: number;
  /** Submit -> COMPLETED per job; mostly time queued behind the others. */
  latencyMs: Spread;
  /** Over the window from the first submit until all had ended; 1 = one core. */
  managerCpuShare: number;
  managerTreeCpuShare: number;
  managerCpuMsPerJob: number;
  managerRssEndBytes: number;
  agentsCpuShare: number;
  encodersCpuShare: number;
  s3CpuShare: number;
  benchCpuShare: number;
  /** Every postgres process, and nats-server, of the machine (shared with other users). */
  postgresCpuShare: number;
  natsCpuShare: number;
  /** Busy CPU of the whole machine (PostgreSQL, NATS and anything else included), in cores. */
  machineBusyCores: number;
  cores: number;
  windowSeconds: number;
}

/** CPU seconds so far of each process with this command name. */
function cpuByProcess(name: string): Map<number, number> {
  return new Map(processesNamed(name).map((pid) => [pid, cpuSeconds([pid])]));
}

/** CPU used since `before` by the processes with this name (new ones count whole). */
function cpuGrowth(name: string, before: Map<number, number>): number {
  return processesNamed(name).reduce((sum, pid) => sum + cpuSeconds([pid]) - (before.get(pid) ?? 0), 0);
}

/** Clients submitting the jobs at once; how often the bench looks whether all have ended. */
const SUBMITTERS = 8;
const POLL_MS = 250;

export async function benchTinyJobs(context: BenchContext): Promise<TinyJobsResult> {
  const { jobs, workers } = context.settings.tinyJobs;
  const cluster = await startCluster(context, { name: "tiny_jobs", workers, capacity: 1 });
  await uploadTinyClip(context, cluster, "tiny-jobs");
  const agentPids = cluster.agents.map((agent) => agent.child.pid as number);
  const cpu = () => ({
    manager: cpuSeconds([cluster.manager.manager]),
    tree: cpuSeconds(cluster.manager.pids),
    agents: cpuSeconds(agentPids),
    encoders: reapedChildrenCpuSeconds(agentPids),
    s3: cpuSeconds([cluster.s3.pid]),
    bench: (() => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    })(),
    machine: machineCpuSeconds(),
    at: performance.now(),
  });

  // Other users' backends count too (the machine's PostgreSQL and NATS are shared); processes
  // that start within the window count whole, ones that end within it are missed.
  const postgresBefore = cpuByProcess("postgres");
  const natsBefore = cpuByProcess("nats-server");
  const before = cpu();
  const started = wallNow();
  const submissions: { jobId: string; sentAtMs: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SUBMITTERS }, async () => {
      for (let index = next++; index < jobs; index = next++) {
        const submission = await cluster.submit(tinyPlan(`job-${index}`));
        submissions.push(submission);
      }
    }),
  );
  const submitSeconds = (wallNow() - started) / 1000;
  context.log(`tiny-jobs: ${jobs} jobs submitted in ${submitSeconds.toFixed(1)} s`);

  const giveUpAt = Date.now() + 120_000 + jobs * 1000;
  let lastReport = Date.now();
  for (;;) {
    const states = await cluster.states();
    const ended = (states.COMPLETED ?? 0) + (states.FAILED ?? 0) + (states.CANCELLED ?? 0);
    if (ended >= jobs) break;
    if (Date.now() > giveUpAt)
      throw new Error(`only ${ended} of ${jobs} jobs ended: ${JSON.stringify(states)}`);
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      context.log(
        `tiny-jobs: ${JSON.stringify(states)} after ${((wallNow() - started) / 1000).toFixed(0)} s`,
      );
    }
    await sleep(POLL_MS);
  }
  const after = cpu();
  const postgresSeconds = cpuGrowth("postgres", postgresBefore);
  const natsSeconds = cpuGrowth("nats-server", natsBefore);
  const managerRssEndBytes = rssBytes(cluster.manager.manager);
  const times = await cluster.times(submissions.map((submission) => submission.jobId));
  const failedAttempts = await cluster.failedAttempts();
  await cluster.stop();

  const rows = submissions.map((submission) => ({ submission, job: times.get(submission.jobId) }));
  const completed = rows.filter((row) => row.job?.state === "COMPLETED");
  const lastCompletedMs = Math.max(...completed.map((row) => row.job?.completedMs ?? Number.NaN));
  const elapsedSeconds = (lastCompletedMs - started) / 1000;
  const windowSeconds = (after.at - before.at) / 1000;
  const share = (key: "manager" | "tree" | "agents" | "encoders" | "s3" | "bench") =>
    (after[key] - before[key]) / windowSeconds;
  return {
    jobs,
    workers,
    completed: completed.length,
    failed: rows.length - completed.length,
    retried: rows.filter((row) => (row.job?.attempts ?? 0) > 1).length,
    failedAttempts,
    submitSeconds,
    elapsedSeconds,
    jobsPerSecond: completed.length / elapsedSeconds,
    latencyMs: spread(completed.map((row) => (row.job?.completedMs ?? Number.NaN) - row.submission.sentAtMs)),
    managerCpuShare: share("manager"),
    managerTreeCpuShare: share("tree"),
    managerCpuMsPerJob: ((after.manager - before.manager) * 1000) / Math.max(1, completed.length),
    managerRssEndBytes,
    agentsCpuShare: share("agents"),
    encodersCpuShare: share("encoders"),
    s3CpuShare: share("s3"),
    benchCpuShare: share("bench"),
    postgresCpuShare: postgresSeconds / windowSeconds,
    natsCpuShare: natsSeconds / windowSeconds,
    machineBusyCores: (after.machine.busy - before.machine.busy) / windowSeconds,
    cores: (after.machine.total - before.machine.total) / windowSeconds,
    windowSeconds,
  };
}
