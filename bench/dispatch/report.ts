/** The dispatch scenario's tables (submit to each step, the hops) per NATS setup side by side, and targets. */
import { met, ms, percent, ratio, table } from "../report.ts";
import type { Spread } from "../shared/stats.ts";
import type { DispatchLatency, DispatchResult } from "./run.ts";
import type { DispatchNats } from "./settings.ts";

/** Percentile bounds in ms, on the one NATS server with one idle Worker (issue 28's table). */
interface Target {
  p50?: number;
  p99?: number;
}

const TARGETS: Record<"submitToAccepted" | "submitToSpawned" | "acceptedToSpawned", Target> = {
  submitToAccepted: { p50: 10, p99: 50 },
  submitToSpawned: { p50: 50 },
  acceptedToSpawned: { p50: 30 },
};

function targetText(target: Target): string {
  const bounds = [
    ...(target.p50 === undefined ? [] : [`p50 <= ${target.p50}`]),
    ...(target.p99 === undefined ? [] : [`p99 <= ${target.p99}`]),
  ];
  return `${bounds.join(", ")} ms`;
}

/** Whether every bound holds; undefined when nothing was measured. */
function targetMet(target: Target, spread: Spread | undefined): boolean | undefined {
  if (!spread || !Number.isFinite(spread.p50)) return undefined;
  return (
    (target.p50 === undefined || spread.p50 <= target.p50) &&
    (target.p99 === undefined || spread.p99 <= target.p99)
  );
}

const NATS_LABELS: Record<DispatchNats, string> = {
  single: "one server",
  cluster: "3-node cluster",
};

type LatencyKey = {
  [K in keyof DispatchLatency]: DispatchLatency[K] extends Spread ? K : never;
}[keyof DispatchLatency];
/** A key of each setup's latencies, or a spread measured once for the whole run. */
type Row = [label: string, value: LatencyKey | Spread, target?: Target];

/**
 * Per row, p50 / p99 / max of each setup measured, then (both measured) cluster over single
 * for p50 and p99, then the target and whether the one server met it (when given). A shared
 * spread fills the first setup's columns.
 */
function sideBySide(firstHeader: string, rows: Row[], byNats: DispatchResult["byNats"]): string {
  const measured = (Object.keys(NATS_LABELS) as DispatchNats[]).filter((nats) => byNats[nats]);
  const both = measured.length === 2;
  const headers = [
    firstHeader,
    ...measured.flatMap((nats) => ["p50", "p99", "max"].map((stat) => `${NATS_LABELS[nats]} ${stat} ms`)),
    ...(both ? ["cluster / one p50", "cluster / one p99"] : []),
    "target (one server)",
    "target met",
  ];
  const body = rows.map(([label, value, target]) => {
    const of = (nats: DispatchNats, index: number): Spread | undefined =>
      typeof value === "string" ? byNats[nats]?.[value] : index === 0 ? value : undefined;
    const spreads = measured.map(of);
    const single = spreads[0];
    const cluster = spreads[1];
    return [
      label,
      ...spreads.flatMap((spread) =>
        spread ? [ms(spread.p50), ms(spread.p99), ms(spread.max)] : ["", "", ""],
      ),
      ...(both
        ? typeof value === "string" && single && cluster
          ? [ratio(cluster.p50 / single.p50), ratio(cluster.p99 / single.p99)]
          : ["", ""]
        : []),
      target ? targetText(target) : "",
      target ? met(targetMet(target, typeof value === "string" ? byNats.single?.[value] : undefined)) : "",
    ];
  });
  return table(headers, body);
}

function runSummary(nats: DispatchNats, latency: DispatchLatency): string {
  return `${NATS_LABELS[nats]}: ${latency.jobs} jobs, ${latency.failed} not COMPLETED, ${latency.retried} retried (failed attempts: ${latency.failedAttempts.join("; ") || "none"})`;
}

export function dispatchReport(result: DispatchResult | undefined): string {
  const title = "## Dispatch: submit to accepted and to ffmpeg spawned, one idle Worker, per NATS";
  if (!result) return `${title}\n\nnot measured`;
  const setups = (Object.keys(NATS_LABELS) as DispatchNats[]).flatMap((nats) => {
    const latency = result.byNats[nats];
    return latency ? [runSummary(nats, latency)] : [];
  });
  const latency = sideBySide(
    "from the submit (bench sends the POST) to",
    [
      ["201 read by the bench", "answered"],
      ["job row written (`jobs.created_at`)", "created"],
      ["lease written by the scheduler (`attempts.dispatched_at`)", "dispatched"],
      ["lease stored in JetStream and marked published (`outbox.published_at`)", "leasePublished"],
      ['agent stored its `accepted` report (its "lease accepted" log line)', "agentAccepted"],
      [
        "**accepted**: Manager applied it (`attempts.accepted_at`, job RUNNING)",
        "accepted",
        TARGETS.submitToAccepted,
      ],
      ["job.updated QUEUED -> RUNNING arrived at an SSE subscriber", "runningEvent"],
      ['**ffmpeg spawned** (agent\'s "encoding" log line)', "ffmpegSpawned", TARGETS.submitToSpawned],
    ],
    result.byNats,
  );
  const hops = sideBySide(
    "hop",
    [
      ["lease written -> marked published", "dispatchedToPublished"],
      ["lease marked published -> Manager applied `accepted`", "publishedToAccepted"],
      ["of which: lease marked published -> agent stored `accepted`", "publishedToAgentAccepted"],
      ["of which: agent stored `accepted` -> Manager applied it", "agentAcceptedToApplied"],
      [
        "accepted -> ffmpeg spawned (negative: spawned before the Manager applied `accepted`)",
        "acceptedToSpawned",
        TARGETS.acceptedToSpawned,
      ],
      ["for scale, on their own: one GET of the clip from s3rver", result.downloadAlone],
      ["for scale, on their own: one ffprobe of the clip (it runs beside ffmpeg)", result.probeAlone],
    ],
    result.byNats,
  );
  return `${title}\n\nOne-second jobs (256x144 in, 144p "fastest" + AAC out), one at a time after 3 unmeasured ones, each submitted once the previous was COMPLETED and 200 ms had passed. Each NATS setup has its own Manager on Node, Worker agent and s3rver: "one server" is the bench's NATS (open, streams of one replica); "3-node cluster" is a private cluster of three nats-server processes on loopback (devstack's \`startNatsCluster\`), operator mode (the Manager's credentials, a user JWT per Worker), streams of three replicas (\`NATS_STREAM_REPLICAS=3\`), the Manager and the Worker given all three URLs. With both measured, both run throughout and take turns job by job. ${setups.join("; ")}; ${result.seconds.toFixed(0)} s in all; the whole machine was ${percent(result.machineBusyCores)} busy of ${result.cores} cores meanwhile (a quiet machine is mostly idle here: one job at a time). Timestamps: the bench's clock for the submit, PostgreSQL's \`now()\` of each recording transaction, the agent's log lines (whole ms); one machine, one clock. Percentiles are nearest-rank (with fewer than 100 jobs p99 is the largest). The targets are the one server's (issue 28's table); cluster / one is information.\n\n${latency}\n\n${hops}\n\nFor scale: graphile-worker's add -> start averages about 4 ms; Temporal Cloud's minimum is about 100 ms.`;
}

export function dispatchTargets(result: DispatchResult | undefined): string[][] {
  const single = result?.byNats.single;
  return (
    [
      ["submit -> accepted", single?.accepted, TARGETS.submitToAccepted],
      ["submit -> ffmpeg spawned", single?.ffmpegSpawned, TARGETS.submitToSpawned],
      ["accepted -> ffmpeg spawned", single?.acceptedToSpawned, TARGETS.acceptedToSpawned],
    ] as const
  ).map(([label, value, target]) => [
    `${label} ${targetText(target)} (one idle Worker)`,
    value
      ? `${[
          ...(target.p50 === undefined ? [] : [`p50 ${ms(value.p50)}`]),
          ...(target.p99 === undefined ? [] : [`p99 ${ms(value.p99)}`]),
        ].join(", ")} ms`
      : "n/a",
    met(targetMet(target, value)),
  ]);
}
