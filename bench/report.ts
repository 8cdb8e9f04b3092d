/** Markdown output: every number is printed, none is asserted. */
import { type ListSizeResult, PAGE } from "./list.ts";
import type { LoadResult } from "./load.ts";
import type { ManagerRuntime } from "./manager-process.ts";
import type { RelayResult } from "./relay.ts";

export const TARGETS = {
  submitsPerSecondAt64OnNode: 2000,
  ratioToPgBoss: 1.0,
  ratioToRawInsert: 0.4,
  listP99MsAtOneMillion: 20,
  relayRowsPerSecond: 5000,
};

export function table(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(headers), line(headers.map(() => "---")), ...rows.map(line)].join("\n");
}

const count = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "n/a");
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : "n/a");
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : "n/a");
const met = (ok: boolean | undefined) => (ok === undefined ? "n/a" : ok ? "yes" : "NO");

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

const LOAD_HEADERS = ["what", "concurrency", "per second", "p50 ms", "p99 ms", "ok", "errors"];

function errorNotes(entries: [string, LoadResult][]): string {
  return entries
    .filter(([, result]) => result.firstError)
    .map(([label, result]) => `\n\nFirst error, ${label} x${result.concurrency}: ${result.firstError}`)
    .join("");
}

/** What is compared at each concurrency level: the Manager per runtime and the two peers. */
export type ThroughputKey = ManagerRuntime | "pgBoss" | "rawInsert";

export interface Results {
  throughput: Partial<Record<ThroughputKey, LoadResult[]>>;
  list?: ListSizeResult[];
  relay?: RelayResult;
  failures: string[];
}

const RUNTIMES: ManagerRuntime[] = ["node", "deno"];

function labelled(results: Results, keys: [ThroughputKey, string][]): [string, LoadResult][] {
  return keys.flatMap(([key, label]) =>
    (results.throughput[key] ?? []).map((result): [string, LoadResult] => [label, result]),
  );
}

export function submitSection(results: Results): string {
  const entries = labelled(
    results,
    RUNTIMES.map((runtime): [ThroughputKey, string] => [runtime, `Manager on ${runtime}`]),
  );
  return `## Submit: POST /api/v1/operations/jobs (jobs/s)\n\n${table(
    LOAD_HEADERS,
    entries.map(([label, result]) => loadRow(label, result)),
  )}${errorNotes(entries)}`;
}

export function peersSection(results: Results): string {
  const entries = labelled(results, [
    ["pgBoss", "pg-boss 10.4.2 send()"],
    ["rawInsert", "raw BEGIN/INSERT/COMMIT"],
  ]);
  return `## Peers on the same PostgreSQL (ops/s)\n\n${table(
    LOAD_HEADERS,
    entries.map(([label, result]) => loadRow(label, result)),
  )}${errorNotes(entries)}`;
}

const at = (levels: LoadResult[] | undefined, concurrency: number) =>
  levels?.find((result) => result.concurrency === concurrency)?.perSecond ?? Number.NaN;

export function ratioSection(results: Results, concurrency: number[]): string {
  const runtimes = RUNTIMES.filter((runtime) => results.throughput[runtime]);
  const headers = [
    "concurrency",
    ...runtimes.map((runtime) => `${runtime} jobs/s`),
    "pg-boss send/s",
    "raw INSERT tx/s",
    ...runtimes.flatMap((runtime) => [`${runtime} / pg-boss`, `${runtime} / raw INSERT`]),
  ];
  const rows = concurrency.map((level) => {
    const peerBoss = at(results.throughput.pgBoss, level);
    const peerRaw = at(results.throughput.rawInsert, level);
    return [
      String(level),
      ...runtimes.map((runtime) => count(at(results.throughput[runtime], level))),
      count(peerBoss),
      count(peerRaw),
      ...runtimes.flatMap((runtime) => {
        const ours = at(results.throughput[runtime], level);
        return [ratio(ours / peerBoss), ratio(ours / peerRaw)];
      }),
    ];
  });
  return `## Submit throughput relative to the peers\n\n${table(headers, rows)}`;
}

export function listSection(results: Results): string {
  const sizes = results.list ?? [];
  const latency = table(
    ["jobs stored", "filter", "matching", "p50 ms", "p99 ms", "requests", "errors"],
    sizes.flatMap((size) =>
      size.measurements.map((m) => [
        count(size.jobs),
        m.label,
        count(m.matching),
        ms(m.result.p50Ms),
        ms(m.result.p99Ms),
        count(m.result.succeeded),
        count(m.result.failed),
      ]),
    ),
  );
  const plans = table(
    ["jobs stored", "filter", "indexes used", "execution ms (EXPLAIN ANALYZE)"],
    sizes.flatMap((size) =>
      size.plans.map((plan) => [
        count(size.jobs),
        plan.label,
        plan.indexes.join(", ") || "none (sequential scan)",
        ms(plan.executionMs),
      ]),
    ),
  );
  const fills = sizes.map((size) => `${count(size.jobs)} jobs: ${size.fillSeconds.toFixed(1)} s`).join("; ");
  const largest = sizes.at(-1);
  const explained = largest
    ? `\n\nEXPLAIN (ANALYZE, BUFFERS) of the page query for ${largest.explained.label} at ${count(largest.jobs)} jobs:\n\n\`\`\`text\n${largest.explained.plan}\n\`\`\``
    : "";
  return `## List: GET /api/v1/operations/jobs, limit ${PAGE.limit}, offset ${PAGE.offset}, one client\n\n${latency}\n\nFill (SQL, count compaction, VACUUM ANALYZE): ${fills}\n\n### Query plans of listJobs\n\n${plans}${explained}`;
}

export function targetsSection(results: Results, concurrency: number[]): string {
  const rows: string[][] = [];
  const node64 = at(results.throughput.node, 64);
  rows.push([
    `>= ${count(TARGETS.submitsPerSecondAt64OnNode)} submits/s at 64 clients on Node`,
    Number.isFinite(node64) ? `${count(node64)}/s` : "n/a",
    met(Number.isFinite(node64) ? node64 >= TARGETS.submitsPerSecondAt64OnNode : undefined),
  ]);
  for (const runtime of RUNTIMES.filter((name) => results.throughput[name])) {
    for (const level of concurrency) {
      const ours = at(results.throughput[runtime], level);
      const toBoss = ours / at(results.throughput.pgBoss, level);
      const toRaw = ours / at(results.throughput.rawInsert, level);
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
  const million = results.list?.find((size) => size.jobs === 1_000_000);
  const worst = million?.measurements.reduce<{ label: string; p99: number } | undefined>(
    (max, m) => (max && max.p99 >= m.result.p99Ms ? max : { label: m.label, p99: m.result.p99Ms }),
    undefined,
  );
  rows.push([
    `list p99 < ${TARGETS.listP99MsAtOneMillion} ms at 1M jobs (worst filter)`,
    worst ? `${ms(worst.p99)} ms (${worst.label})` : "n/a",
    met(worst ? worst.p99 < TARGETS.listP99MsAtOneMillion : undefined),
  ]);
  rows.push([
    `outbox relay >= ${count(TARGETS.relayRowsPerSecond)} rows/s`,
    results.relay ? `${count(results.relay.perSecond)} rows/s` : "n/a",
    met(results.relay ? results.relay.perSecond >= TARGETS.relayRowsPerSecond : undefined),
  ]);
  return `## Targets (printed, not asserted)\n\n${table(["target", "measured", "met"], rows)}`;
}

export function relaySection(results: Results): string {
  const relay = results.relay;
  const rows = relay ? [[count(relay.rows), relay.seconds.toFixed(2), count(relay.perSecond)]] : [];
  return `## Outbox relay: committed rows published to JetStream and marked\n\n${table(["rows", "seconds", "rows/s"], rows)}`;
}
