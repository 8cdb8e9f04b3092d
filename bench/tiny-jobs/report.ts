/** The tiny-jobs scenario's table and its (target-less) row in the targets table. */
import { count, mib, percent, seconds, table } from "../report.ts";
import type { TinyJobsResult } from "./run.ts";

export function tinyJobsReport(result: TinyJobsResult | undefined): string {
  const title = "## Tiny jobs: many one-second jobs through several Workers";
  if (!result) return `${title}\n\nnot measured`;
  const rows: string[][] = [
    [
      "jobs COMPLETED / not / retried",
      `${count(result.completed)} / ${count(result.failed)} / ${count(result.retried)}`,
      `${count(result.jobs)} / 0 / 0`,
    ],
    ["failed attempts by code", result.failedAttempts.join("; ") || "none", ""],
    ["time to submit them all (8 clients)", `${seconds(result.submitSeconds)} s`, ""],
    ["first submit -> last COMPLETED", `${seconds(result.elapsedSeconds)} s`, ""],
    ["throughput", `${result.jobsPerSecond.toFixed(2)} jobs/s`, "none set"],
    [
      "submit -> COMPLETED per job p50 / p99 (mostly queued behind the others)",
      `${seconds(result.latencyMs.p50 / 1000)} / ${seconds(result.latencyMs.p99 / 1000)} s`,
      "",
    ],
    ["Manager CPU (its node process), share of one core", percent(result.managerCpuShare), "none set"],
    ["Manager CPU per job", `${result.managerCpuMsPerJob.toFixed(1)} ms`, ""],
    ["same, with npm and sh above it", percent(result.managerTreeCpuShare), ""],
    ["Manager RSS at the end", mib(result.managerRssEndBytes), ""],
    [`Worker agents (${result.workers} Bun processes)`, percent(result.agentsCpuShare), ""],
    ["ffmpeg and ffprobe runs the agents finished", percent(result.encodersCpuShare), ""],
    ["s3rver (child process)", percent(result.s3CpuShare), ""],
    ["this bench process", percent(result.benchCpuShare), ""],
    [
      "PostgreSQL: every postgres process (the machine's, other users' too; ones that ended meanwhile missed)",
      percent(result.postgresCpuShare),
      "",
    ],
    ["nats-server (the machine's: other users' too)", percent(result.natsCpuShare), ""],
    [
      "whole machine busy (PostgreSQL, NATS and anything else included)",
      `${percent(result.machineBusyCores)} of ${result.cores.toFixed(0)} cores`,
      "",
    ],
  ];
  return `${title}\n\n${count(result.jobs)} jobs (256x144 in, 144p "fastest" + AAC out, one MP4), submitted at once, run by ${result.workers} Worker agents with WORKER_CAPACITY=1 each, one Manager on Node, s3rver on loopback. CPU is measured over ${seconds(result.windowSeconds)} s from the first submit until every job had ended, as a share of one core (100 % = one core).\n\n${table(["measure", "value", "target"], rows)}`;
}

export function tinyJobsTargets(result: TinyJobsResult | undefined): string[][] {
  return [
    [
      `tiny jobs: jobs/s with ${result?.workers ?? "n/a"} Workers (no target set)`,
      result
        ? `${result.jobsPerSecond.toFixed(2)} jobs/s, Manager CPU ${percent(result.managerCpuShare)}`
        : "n/a",
      "n/a",
    ],
  ];
}
