/** The dispatch scenario's tables (submit to each step, the hops) and targets. */
import { met, ms, percent, table } from "../report.ts";
import type { Spread } from "../shared/stats.ts";
import type { DispatchResult } from "./run.ts";

const TARGETS = {
  /** Submit -> accepted, and submit -> ffmpeg spawned, with one idle Worker. */
  dispatchP50Ms: 10,
  dispatchP99Ms: 50,
};

/** Rows of label, spread and target (none when left out). */
function spreadRows(rows: [label: string, value: Spread, target?: string][]): string[][] {
  return rows.map(([label, value, target = ""]) => [
    label,
    ms(value.p50),
    ms(value.p99),
    ms(value.max),
    target,
  ]);
}

export function dispatchReport(result: DispatchResult | undefined): string {
  const title = "## Dispatch: submit to accepted and to ffmpeg spawned, one idle Worker";
  if (!result) return `${title}\n\nnot measured`;
  const target = `p50 <= ${TARGETS.dispatchP50Ms}, p99 <= ${TARGETS.dispatchP99Ms}`;
  const latency = table(
    ["from the submit (bench sends the POST) to", "p50 ms", "p99 ms", "max ms", "target"],
    spreadRows([
      ["201 read by the bench", result.answered],
      ["job row written (`jobs.created_at`)", result.created],
      ["lease written by the scheduler (`attempts.dispatched_at`)", result.dispatched],
      ["relay's transaction publishing the lease began (`outbox.published_at`)", result.leasePublished],
      ['agent stored its `accepted` report (its "lease accepted" log line)', result.agentAccepted],
      ["**accepted**: Manager applied it (`attempts.accepted_at`, job RUNNING)", result.accepted, target],
      ["job.updated QUEUED -> RUNNING arrived at an SSE subscriber", result.runningEvent],
      ['**ffmpeg spawned** (agent\'s "encoding" log line)', result.ffmpegSpawned, target],
    ]),
  );
  const hops = table(
    ["hop", "p50 ms", "p99 ms", "max ms", ""],
    spreadRows([
      ["lease written -> relay publishing it", result.dispatchedToPublished],
      ["relay publishing the lease -> Manager applied `accepted`", result.publishedToAccepted],
      ["accepted -> ffmpeg spawned (S3 download, ffprobe, `started` report)", result.acceptedToSpawned],
      ["of which, on their own: one GET of the clip from s3rver", result.downloadAlone],
      ["of which, on their own: one ffprobe of the clip", result.probeAlone],
    ]),
  );
  return `${title}\n\n${result.jobs} one-second jobs (256x144 in, 144p "fastest" + AAC out), one at a time after 3 unmeasured ones, each submitted once the previous was COMPLETED and 200 ms had passed; ${result.failed} not COMPLETED, ${result.retried} retried (failed attempts: ${result.failedAttempts.join("; ") || "none"}); ${result.seconds.toFixed(0)} s in all; the whole machine was ${percent(result.machineBusyCores)} busy of ${result.cores} cores meanwhile (a quiet machine is mostly idle here: one job at a time). Timestamps: the bench's clock for the submit, PostgreSQL's \`now()\` of each recording transaction, the agent's log lines (whole ms); one machine, one clock. Percentiles are nearest-rank (with fewer than 100 jobs p99 is the largest).\n\n${latency}\n\n${hops}\n\nFor scale: graphile-worker's add -> start averages about 4 ms; Temporal Cloud's minimum is about 100 ms.`;
}

export function dispatchTargets(result: DispatchResult | undefined): string[][] {
  return (
    [
      ["submit -> accepted", result?.accepted],
      ["submit -> ffmpeg spawned", result?.ffmpegSpawned],
    ] as const
  ).flatMap(([label, value]) => [
    [
      `${label} p50 <= ${TARGETS.dispatchP50Ms} ms (one idle Worker)`,
      value ? `${ms(value.p50)} ms` : "n/a",
      met(value ? value.p50 <= TARGETS.dispatchP50Ms : undefined),
    ],
    [
      `${label} p99 <= ${TARGETS.dispatchP99Ms} ms (one idle Worker)`,
      value ? `${ms(value.p99)} ms` : "n/a",
      met(value ? value.p99 <= TARGETS.dispatchP99Ms : undefined),
    ],
  ]);
}
