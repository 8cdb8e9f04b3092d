/** The metrics scenario's tables: submit with metrics on and off, the scrape; and its target. */
import { count, fine, kib, met, ms, table } from "../report.ts";
import type { Settings } from "../settings.ts";
import type { LoadResult } from "../shared/load.ts";
import { median } from "../shared/stats.ts";
import type { MetricsLevel, MetricsResult, MetricsRound, ScrapeMeasurement } from "./run.ts";

const TARGETS = { onToOffRatio: 0.97 };

/** A round counts only when both sides were measured in it, so the pooled ratio stays paired. */
const complete = (level: MetricsLevel) =>
  level.rounds.filter((round): round is MetricsRound & { on: LoadResult; off: LoadResult } =>
    Boolean(round.on && round.off),
  );

/** Jobs over seconds, pooled over the complete rounds. */
function pooledRate(level: MetricsLevel, key: "on" | "off"): number {
  const rounds = complete(level);
  const jobs = rounds.reduce((sum, round) => sum + round[key].succeeded, 0);
  const seconds = rounds.reduce((sum, round) => sum + round[key].seconds, 0);
  return seconds > 0 ? jobs / seconds : Number.NaN;
}

const levelRatio = (level: MetricsLevel) => pooledRate(level, "on") / pooledRate(level, "off");

function latencies(level: MetricsLevel, key: "on" | "off"): string {
  const rounds = complete(level);
  return `${ms(median(rounds.map((round) => round[key].p50Ms)))} / ${ms(median(rounds.map((round) => round[key].p99Ms)))}`;
}

function throughputSection(levels: MetricsLevel[] | undefined, settings: Settings): string {
  const title =
    "## Metrics: submit with METRICS_ENABLED=true and false (POST /api/v1/operations/jobs, Manager on Node)";
  if (!levels) return `${title}\n\nnot measured`;
  const rows = levels.map((level) => {
    const perRound = level.rounds.map(
      (round) => (round.on?.perSecond ?? Number.NaN) / (round.off?.perSecond ?? Number.NaN),
    );
    return [
      String(level.concurrency),
      count(pooledRate(level, "on")),
      count(pooledRate(level, "off")),
      fine(levelRatio(level)),
      fine(median(perRound)),
      perRound.map((value, index) => `${fine(value)}${level.rounds[index]?.onFirst ? "" : "*"}`).join(", "),
      latencies(level, "on"),
      latencies(level, "off"),
      count(level.rounds.reduce((sum, round) => sum + (round.on?.failed ?? 0) + (round.off?.failed ?? 0), 0)),
    ];
  });
  const errors = levels
    .flatMap((level) =>
      level.rounds.flatMap((round) =>
        (["on", "off"] as const)
          .filter((key) => round[key]?.firstError)
          .map((key) => `\n\nFirst error, metrics ${key} x${level.concurrency}: ${round[key]?.firstError}`),
      ),
    )
    .slice(0, 4)
    .join("");
  return [
    title,
    `Two Managers on fresh schemas, alike but for METRICS_ENABLED; ${settings.metrics.rounds} rounds, each measuring both at every level (${settings.warmupSeconds} s warm-up + ${settings.submit.seconds} s), metrics on first in odd rounds and off first in even ones (marked *). jobs/s and on / off (the target's): the jobs of the rounds where both were measured over their seconds; p50 / p99: the median of those rounds'. A burst of other work on the machine sinks one round's ratio: compare the median of the rounds' ratios, or raise BENCH_METRICS_ROUNDS. Nothing scrapes during the load (the next table times a scrape).`,
    `${table(
      [
        "concurrency",
        "on jobs/s",
        "off jobs/s",
        "on / off",
        "median of the rounds' on / off",
        "per round on / off",
        "on p50 / p99 ms",
        "off p50 / p99 ms",
        "errors",
      ],
      rows,
    )}${errors}`,
  ].join("\n\n");
}

function scrapeSection(scrapes: ScrapeMeasurement[] | undefined, settings: Settings): string {
  const title = `## Metrics: GET /metrics (one client, ${settings.metrics.scrapes} scrapes back to back after one unmeasured)`;
  if (!scrapes) return `${title}\n\nnot measured`;
  const rows = scrapes.map((scrape) => [
    count(scrape.jobs),
    count(scrape.jobsReported),
    count(scrape.queuedReported),
    ms(scrape.scrapeMs.p50),
    ms(scrape.scrapeMs.p99),
    ms(scrape.scrapeMs.max),
    `${count(scrape.bytes)} B (${kib(scrape.bytes)})`,
    count(scrape.samples),
    `${ms(scrape.queryMs.p50)} / ${ms(scrape.queryMs.p99)} / ${ms(scrape.queryMs.max)}`,
  ]);
  const fills = scrapes
    .filter((scrape) => scrape.jobs > 0)
    .map((scrape) => `${count(scrape.jobs)} jobs: ${scrape.fillSeconds.toFixed(1)} s`)
    .join("; ");
  return [
    title,
    "On the API port, no METRICS_BEARER_TOKEN. The stored-counts query is the scrape's one query (`readStoredCounts`), also sent as often from the bench on a connection of its own; it counts the QUEUED jobs one by one (the scheduler's partial index), so its time grows with the queue, not with the jobs stored. The totals are the sums the last scrape reported (n/a: the stored series were left out). No target is set.",
    table(
      [
        "jobs stored",
        "tjm_jobs total",
        "tjm_queue_depth total",
        "scrape p50 ms",
        "p99 ms",
        "max ms",
        "response",
        "samples",
        "stored-counts query p50 / p99 / max ms",
      ],
      rows,
    ),
    `Fill (SQL, count compaction, VACUUM ANALYZE): ${fills || "none"}`,
  ].join("\n\n");
}

export function metricsReport(result: MetricsResult | undefined, settings: Settings): string {
  return [throughputSection(result?.throughput, settings), scrapeSection(result?.scrapes, settings)].join(
    "\n\n",
  );
}

export function metricsTargets(result: MetricsResult | undefined, settings: Settings): string[][] {
  return settings.submit.concurrency.map((concurrency) => {
    const level = result?.throughput?.find((measured) => measured.concurrency === concurrency);
    const measured = level ? levelRatio(level) : Number.NaN;
    return [
      `metrics on >= ${TARGETS.onToOffRatio}x off, submit jobs/s at concurrency ${concurrency} (Node)`,
      fine(measured),
      met(Number.isFinite(measured) ? measured >= TARGETS.onToOffRatio : undefined),
    ];
  });
}
