/** The scale-out scenario's tables: one Manager against two on one PostgreSQL, and where the CPU went. */
import { count, ms, ratio, table } from "../report.ts";
import type { Settings } from "../settings.ts";
import { median } from "../shared/stats.ts";
import type { CoresBusy, ReplicaCount, ScaleOutLevel, ScaleOutMeasurement, ScaleOutResult } from "./run.ts";

type CompleteRound = { one: ScaleOutMeasurement; two: ScaleOutMeasurement };

/** A round counts only when both were measured in it, so the pooled ratio stays paired. */
const complete = (level: ScaleOutLevel): CompleteRound[] =>
  level.rounds.filter((round): round is typeof round & CompleteRound => Boolean(round.one && round.two));

/** Jobs over seconds, pooled over the complete rounds. */
function pooledRate(level: ScaleOutLevel, key: ReplicaCount): number {
  const rounds = complete(level);
  const jobs = rounds.reduce((sum, round) => sum + round[key].load.succeeded, 0);
  const seconds = rounds.reduce((sum, round) => sum + round[key].load.seconds, 0);
  return seconds > 0 ? jobs / seconds : Number.NaN;
}

/** Two Managers' throughput over one's, per level: the scaling ratio. */
const levelRatio = (level: ScaleOutLevel) => pooledRate(level, "two") / pooledRate(level, "one");

function latencies(level: ScaleOutLevel, key: ReplicaCount): string {
  const rounds = complete(level);
  return `${ms(median(rounds.map((round) => round[key].load.p50Ms)))} / ${ms(median(rounds.map((round) => round[key].load.p99Ms)))}`;
}

const CPU_PARTS: [keyof CoresBusy, string][] = [
  ["managerA", "Manager A"],
  ["managerB", "Manager B"],
  ["postgres", "PostgreSQL"],
  ["bench", "bench (load)"],
  ["machine", "whole machine"],
];

/** The median over the complete rounds of the cores one part kept busy. */
const coresOf = (level: ScaleOutLevel, key: ReplicaCount, part: keyof CoresBusy) =>
  median(complete(level).map((round) => round[key].cores[part]));

const cores = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : "n/a");

function throughputTable(levels: ScaleOutLevel[]): string {
  const rows = levels.map((level) => {
    const perRound = level.rounds.map(
      (round) => (round.two?.load.perSecond ?? Number.NaN) / (round.one?.load.perSecond ?? Number.NaN),
    );
    return [
      String(level.concurrency),
      count(pooledRate(level, "one")),
      count(pooledRate(level, "two")),
      ratio(levelRatio(level)),
      perRound.map((value, index) => `${ratio(value)}${level.rounds[index]?.oneFirst ? "" : "*"}`).join(", "),
      latencies(level, "one"),
      latencies(level, "two"),
      count(
        level.rounds.reduce(
          (sum, round) => sum + (round.one?.load.failed ?? 0) + (round.two?.load.failed ?? 0),
          0,
        ),
      ),
    ];
  });
  const errors = levels
    .flatMap((level) =>
      level.rounds.flatMap((round) =>
        (["one", "two"] as const)
          .filter((key) => round[key]?.load.firstError)
          .map((key) => `\n\nFirst error, ${key} x${level.concurrency}: ${round[key]?.load.firstError}`),
      ),
    )
    .slice(0, 4)
    .join("");
  return `${table(
    [
      "concurrency",
      "one Manager jobs/s",
      "two Managers jobs/s",
      "two / one",
      "per round two / one",
      "one p50 / p99 ms",
      "two p50 / p99 ms",
      "errors",
    ],
    rows,
  )}${errors}`;
}

function cpuTable(levels: ScaleOutLevel[], machineCores: number): string {
  const rows = levels.flatMap((level) =>
    (["one", "two"] as const).map((key) => [
      String(level.concurrency),
      key,
      ...CPU_PARTS.map(([part]) => cores(coresOf(level, key, part))),
      cores(machineCores - coresOf(level, key, "machine")),
    ]),
  );
  return table(
    ["concurrency", "Managers", ...CPU_PARTS.map(([, label]) => `${label} cores`), "idle cores"],
    rows,
  );
}

export function scaleOutReport(result: ScaleOutResult | undefined, settings: Settings): string {
  const title = "## Scale-out: submit on one Manager and on two on the same PostgreSQL (jobs/s)";
  if (!result) return `${title}\n\nnot measured`;
  return [
    title,
    `Two Managers on Node (\`npm run manager\`) on one fresh schema, both up throughout. "one": every client on Manager A (B idle); "two": client i on Manager i mod 2, half each (as the compose gateway, HAProxy in TCP mode, spreads keep-alive connections), the same total concurrency; with one client "two" is Manager A alone. ${settings.scaleOut.rounds} rounds, each measuring both at every level (${settings.warmupSeconds} s warm-up + ${settings.submit.seconds} s), one first in odd rounds and two first in even ones (marked *). jobs/s and two / one: the jobs of the rounds where both were measured over their seconds; p50 / p99: the median of those rounds'. No target is set: the ratio is information.`,
    throughputTable(result.levels),
    `Where the ${result.cores} cores went (cores busy on average over warm-up and measured seconds, median of the rounds; CPU time from \`/proc\`: each Manager's npm, sh and node; every postgres process on the machine, other clients' backends included; this process, which generates the load; and the whole machine, whatever else runs on it included). When the machine has no idle core left, a second Manager can only take CPU from the others: from PostgreSQL, the first Manager and the load (the ratio then says how much cheaper two half-loaded Managers are than one fully loaded, not what a second machine would add), or from whatever else runs (the kernel gives a second busy process a second share of an oversubscribed machine, which inflates the ratio: trust it only when the load average at start was low).`,
    cpuTable(result.levels, result.cores),
  ].join("\n\n");
}

/** No numeric target: the scaling ratio is printed as information. */
export function scaleOutTargets(): string[][] {
  return [];
}
