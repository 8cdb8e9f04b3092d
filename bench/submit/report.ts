/** The submit scenario's tables: the Manager per runtime, the peers, the ratios; and its targets. */
import { count, met, ms, ratio, table } from "../report.ts";
import type { Settings } from "../settings.ts";
import type { LoadResult } from "../shared/load.ts";
import type { ContenderKey, SubmitResult } from "./run.ts";
import { BENCH_RUNTIMES, type BenchRuntime } from "./settings.ts";

const TARGETS = {
  submitsPerSecondAt64OnNode: 2000,
  ratioToPgBoss: 1.0,
  ratioToRawInsert: 0.4,
};

const RUNTIME_LABELS: Record<BenchRuntime, string> = {
  node: "Manager on Node 24",
  deno: "Manager on Deno",
  node20: "Manager on Node 20",
};

const LOAD_HEADERS = ["what", "concurrency", "per second", "p50 ms", "p99 ms", "ok", "errors"];

function loadRow(label: string, result: LoadResult): string[] {
  return [
    label,
    String(result.concurrency),
    count(result.perSecond),
    ms(result.p50Ms),
    ms(result.p99Ms),
    count(result.succeeded),
    count(result.failed),
  ];
}

/** One table of the labelled contenders' levels, then the first error of each level that had one. */
function loadTable(title: string, result: SubmitResult, keys: [ContenderKey, string][]): string {
  const entries = keys.flatMap(([key, label]) =>
    (result[key] ?? []).map((level): [string, LoadResult] => [label, level]),
  );
  const errors = entries
    .filter(([, level]) => level.firstError)
    .map(([label, level]) => `\n\nFirst error, ${label} x${level.concurrency}: ${level.firstError}`)
    .join("");
  return `${title}\n\n${table(
    LOAD_HEADERS,
    entries.map(([label, level]) => loadRow(label, level)),
  )}${errors}`;
}

const at = (levels: LoadResult[] | undefined, concurrency: number) =>
  levels?.find((level) => level.concurrency === concurrency)?.perSecond ?? Number.NaN;

function ratioSection(result: SubmitResult, concurrency: number[]): string {
  const runtimes = BENCH_RUNTIMES.filter((runtime) => result[runtime]);
  const bothNodes = runtimes.includes("node") && runtimes.includes("node20");
  const headers = [
    "concurrency",
    ...runtimes.map((runtime) => `${runtime} jobs/s`),
    "pg-boss send/s",
    "raw INSERT tx/s",
    ...runtimes.flatMap((runtime) => [`${runtime} / pg-boss`, `${runtime} / raw INSERT`]),
    ...(bothNodes ? ["Node 24 / Node 20"] : []),
  ];
  const rows = concurrency.map((level) => {
    const peerBoss = at(result.pgBoss, level);
    const peerRaw = at(result.rawInsert, level);
    return [
      String(level),
      ...runtimes.map((runtime) => count(at(result[runtime], level))),
      count(peerBoss),
      count(peerRaw),
      ...runtimes.flatMap((runtime) => {
        const ours = at(result[runtime], level);
        return [ratio(ours / peerBoss), ratio(ours / peerRaw)];
      }),
      ...(bothNodes ? [ratio(at(result.node, level) / at(result.node20, level))] : []),
    ];
  });
  return `## Submit throughput relative to the peers\n\n${table(headers, rows)}`;
}

export function submitReport(result: SubmitResult | undefined, settings: Settings): string {
  const measured = result ?? {};
  return [
    loadTable(
      "## Submit: POST /api/v1/operations/jobs (jobs/s)",
      measured,
      BENCH_RUNTIMES.map((runtime): [ContenderKey, string] => [runtime, RUNTIME_LABELS[runtime]]),
    ),
    loadTable("## Peers on the same PostgreSQL (ops/s)", measured, [
      ["pgBoss", "pg-boss 10.4.2 send()"],
      ["rawInsert", "raw BEGIN/INSERT/COMMIT"],
    ]),
    ratioSection(measured, settings.submit.concurrency),
  ].join("\n\n");
}

export function submitTargets(result: SubmitResult | undefined, settings: Settings): string[][] {
  const measured = result ?? {};
  const node64 = at(measured.node, 64);
  const rows = [
    [
      `>= ${count(TARGETS.submitsPerSecondAt64OnNode)} submits/s at 64 clients on Node`,
      Number.isFinite(node64) ? `${count(node64)}/s` : "n/a",
      met(Number.isFinite(node64) ? node64 >= TARGETS.submitsPerSecondAt64OnNode : undefined),
    ],
  ];
  // Targets hold for the runtimes TJM ships on; Node 20 is only measured for comparison.
  for (const runtime of (["node", "deno"] as const).filter((name) => measured[name])) {
    for (const level of settings.submit.concurrency) {
      const ours = at(measured[runtime], level);
      const toBoss = ours / at(measured.pgBoss, level);
      const toRaw = ours / at(measured.rawInsert, level);
      rows.push([
        `${runtime} >= ${TARGETS.ratioToPgBoss.toFixed(1)}x pg-boss send() at ${level}`,
        ratio(toBoss),
        met(Number.isFinite(toBoss) ? toBoss >= TARGETS.ratioToPgBoss : undefined),
      ]);
      rows.push([
        `${runtime} >= ${TARGETS.ratioToRawInsert.toFixed(1)}x raw INSERT at ${level}`,
        ratio(toRaw),
        met(Number.isFinite(toRaw) ? toRaw >= TARGETS.ratioToRawInsert : undefined),
      ]);
    }
  }
  return rows;
}
