/** Markdown output: every number is printed, none is asserted. */
import type { HeartbeatResult, LagSummary } from "./heartbeats.ts";
import { type ListSizeResult, PAGE } from "./list.ts";
import type { LoadResult } from "./load.ts";
import type { ManagerRuntime } from "./manager-process.ts";
import type { RelayResult } from "./relay.ts";
import type { ScenarioName } from "./settings.ts";
import type { SseResult } from "./sse.ts";

export const TARGETS = {
  submitsPerSecondAt64OnNode: 2000,
  ratioToPgBoss: 1.0,
  ratioToRawInsert: 0.4,
  listP99MsAtOneMillion: 20,
  relayRowsPerSecond: 5000,
  /** Manager CPU while every Worker heartbeats, as a share of one core. */
  heartbeatCpuShare: 0.15,
  /** Connectivity transitions recorded within this many heartbeat intervals of their deadline. */
  transitionLagIntervals: 1,
  sseP99MsAt1000: 100,
  sseBytesPerSubscriber: 25 * 1024,
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
  heartbeats?: HeartbeatResult;
  sse?: SseResult;
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

export function targetsSection(
  results: Results,
  concurrency: number[],
  scenarios: readonly ScenarioName[],
): string {
  const rows: string[][] = [];
  if (scenarios.includes("submit")) submitTargets(results, concurrency, rows);
  if (scenarios.includes("list")) listTarget(results, rows);
  if (scenarios.includes("relay")) {
    rows.push([
      `outbox relay >= ${count(TARGETS.relayRowsPerSecond)} rows/s`,
      results.relay ? `${count(results.relay.perSecond)} rows/s` : "n/a",
      met(results.relay ? results.relay.perSecond >= TARGETS.relayRowsPerSecond : undefined),
    ]);
  }
  if (scenarios.includes("heartbeats")) heartbeatTargets(results.heartbeats, rows);
  if (scenarios.includes("sse")) sseTargets(results.sse, rows);
  return `## Targets (printed, not asserted)\n\n${table(["target", "measured", "met"], rows)}`;
}

function submitTargets(results: Results, concurrency: number[], rows: string[][]): void {
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
}

function listTarget(results: Results, rows: string[][]): void {
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
}

export function relaySection(results: Results): string {
  const relay = results.relay;
  const rows = relay ? [[count(relay.rows), relay.seconds.toFixed(2), count(relay.perSecond)]] : [];
  return `## Outbox relay: committed rows published to JetStream and marked\n\n${table(["rows", "seconds", "rows/s"], rows)}`;
}

const percent = (share: number) => (Number.isFinite(share) ? `${(share * 100).toFixed(1)} %` : "n/a");
const mib = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : "n/a");
const kib = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(1)} KiB` : "n/a");

function heartbeatTargets(result: HeartbeatResult | undefined, rows: string[][]): void {
  rows.push([
    `Manager CPU < ${percent(TARGETS.heartbeatCpuShare)} of one core with every Worker heartbeating`,
    result ? `${percent(result.managerCpuShare)} (${count(result.workers)} Workers)` : "n/a",
    met(result ? result.managerCpuShare < TARGETS.heartbeatCpuShare : undefined),
  ]);
  for (const [label, lag] of [
    ["SUSPECTED", result?.suspected],
    ["OFFLINE", result?.offline],
  ] as const) {
    const limit = result ? TARGETS.transitionLagIntervals * result.intervalMs : Number.NaN;
    const complete = result !== undefined && lag !== undefined && lag.recorded === result.stopped;
    rows.push([
      `${label} recorded within one interval of its deadline (max lag)`,
      result && lag ? `${ms(lag.maxMs)} ms (${lag.recorded}/${result.stopped} recorded)` : "n/a",
      met(result && lag ? complete && lag.maxMs <= limit : undefined),
    ]);
  }
  rows.push([
    "no transition of a Worker that kept heartbeating",
    result ? String(result.keptTransitions) : "n/a",
    met(result ? result.keptTransitions === 0 : undefined),
  ]);
}

function sseTargets(result: SseResult | undefined, rows: string[][]): void {
  const at1000 = result?.levels.find((level) => level.subscribers === 1000);
  rows.push([
    `SSE delivery p99 <= ${TARGETS.sseP99MsAt1000} ms at 1,000 subscribers`,
    at1000 ? `${ms(at1000.p99Ms)} ms` : "n/a",
    met(at1000 ? at1000.p99Ms <= TARGETS.sseP99MsAt1000 : undefined),
  ]);
  for (const level of result?.levels ?? []) {
    rows.push([
      `Manager memory <= ${kib(TARGETS.sseBytesPerSubscriber)} per subscriber at ${count(level.subscribers)}`,
      kib(level.bytesPerSubscriber),
      met(
        Number.isFinite(level.bytesPerSubscriber)
          ? level.bytesPerSubscriber <= TARGETS.sseBytesPerSubscriber
          : undefined,
      ),
    ]);
  }
  if (!result)
    rows.push([`Manager memory <= ${kib(TARGETS.sseBytesPerSubscriber)} per subscriber`, "n/a", "n/a"]);
}

function lagRow(label: string, deadline: string, lag: LagSummary, result: HeartbeatResult): string[] {
  return [
    label,
    deadline,
    `${lag.recorded}/${result.stopped}`,
    ms(lag.p50Ms),
    ms(lag.p99Ms),
    ms(lag.maxMs),
    `<= ${count(TARGETS.transitionLagIntervals * result.intervalMs)}`,
  ];
}

export function heartbeatSection(results: Results): string {
  const result = results.heartbeats;
  const title = "## Heartbeats: simulated Workers on one Manager (Node)";
  if (!result) return `${title}\n\nnot measured`;
  const kept = result.workers - result.stopped;
  const load = table(
    ["measure", "value", "target"],
    [
      [
        "Workers registered (real route, fresh NKey and token each)",
        `${count(result.workers)} in ${result.registrationSeconds.toFixed(1)} s, ${count(result.registrationFailures)} failed`,
        "",
      ],
      [
        `heartbeats published (1 per ${count(result.intervalMs)} ms per Worker, ${result.connections} NATS connections)`,
        `${count(result.heartbeatsPerSecond)}/s over ${result.windowSeconds.toFixed(1)} s`,
        "",
      ],
      [
        "Manager CPU (its node process), share of one core",
        percent(result.managerCpuShare),
        `< ${percent(TARGETS.heartbeatCpuShare)}`,
      ],
      ["same, with npm, sh and tsx's CLI above it", percent(result.treeCpuShare), ""],
      [
        "Manager RSS at window start / end / max",
        `${mib(result.rssStartBytes)} / ${mib(result.rssEndBytes)} / ${mib(result.rssMaxBytes)}`,
        "",
      ],
      [
        `transitions of the ${count(kept)} Workers that kept heartbeating (whole run)`,
        count(result.keptTransitions),
        "0",
      ],
      [
        `transitions of the ${count(result.stopped)} stopped Workers before they stopped`,
        count(result.stoppedEarlyTransitions),
        "0",
      ],
    ],
  );
  const lag = table(
    ["transition", "deadline", "recorded", "lag p50 ms", "lag p99 ms", "lag max ms", "target ms"],
    [
      lagRow(
        "ONLINE -> SUSPECTED",
        `last heartbeat sent + 2 x ${count(result.intervalMs)} ms`,
        result.suspected,
        result,
      ),
      lagRow(
        "SUSPECTED -> OFFLINE",
        `last heartbeat sent + ${count(result.lostAfterMs)} ms`,
        result.offline,
        result,
      ),
    ],
  );
  const note = result.firstRegistrationError
    ? `\n\nFirst registration error: ${result.firstRegistrationError}`
    : "";
  return `${title}\n\n${load}\n\nLag from each stopped Worker's deadline to its transition's \`created_at\` in the outbox (PostgreSQL's clock, same machine):\n\n${lag}${note}`;
}

export function sseSection(results: Results): string {
  const title = "## SSE fan-out: GET /api/v1/operations/events on one Manager (Node)";
  const levels = results.sse?.levels ?? [];
  if (levels.length === 0) return `${title}\n\nnot measured`;
  const memory = table(
    [
      "subscribers",
      "connected (failed)",
      "connect s",
      "RSS before",
      "RSS connected",
      "RSS after events",
      "RSS 3 s after disconnect",
      "per subscriber",
      "target",
    ],
    levels.map((level) => [
      count(level.subscribers),
      `${count(level.connected)} (${count(level.failed)})`,
      level.connectSeconds.toFixed(1),
      mib(level.rssBaselineBytes),
      mib(level.rssConnectedBytes),
      mib(level.rssAfterEventsBytes),
      mib(level.rssDisconnectedBytes),
      kib(level.bytesPerSubscriber),
      `<= ${kib(TARGETS.sseBytesPerSubscriber)}`,
    ]),
  );
  const delivery = table(
    ["subscribers", "events", "got every event", "deliveries", "p50 ms", "p99 ms", "max ms", "target p99"],
    levels.map((level) => [
      count(level.subscribers),
      count(level.events),
      `${count(level.receivedAll)} of ${count(level.connected)}`,
      `${count(level.deliveries)} of ${count(level.events * level.connected)}`,
      ms(level.p50Ms),
      ms(level.p99Ms),
      ms(level.maxMs),
      level.subscribers === 1000 ? `<= ${TARGETS.sseP99MsAt1000} ms` : "",
    ]),
  );
  const breakdown = table(
    [
      "subscribers",
      "relay took it p50 ms",
      "in JetStream p50 ms",
      "first arrival p50 ms",
      "fan-out p50 / max ms",
      "delivery s",
      "CPU Manager / subscribers",
      "Manager CPU per delivery",
      "new consumers on the events stream",
    ],
    levels.map((level) => [
      count(level.subscribers),
      ms(level.relayP50Ms),
      ms(level.storedP50Ms),
      ms(level.firstP50Ms),
      `${ms(level.fanOutP50Ms)} / ${ms(level.fanOutMaxMs)}`,
      level.deliverySeconds.toFixed(1),
      `${percent(level.managerCpuShare)} / ${percent(level.subscribersCpuShare)}`,
      level.deliveries > 0
        ? `${((level.managerCpuShare * level.deliverySeconds * 1e6) / level.deliveries).toFixed(0)} µs`
        : "n/a",
      level.eventConsumers === undefined ? "n/a" : String(level.eventConsumers),
    ]),
  );
  const errors = levels
    .filter((level) => level.firstError || level.lost > 0)
    .map(
      (level) =>
        `\n\nAt ${count(level.subscribers)}: ${level.lost} subscriptions closed by the server while measured; first connect error: ${level.firstError ?? "none"}`,
    )
    .join("");
  return `${title}\n\nManager memory (RSS of its node process; a bare Node SSE server holds about 12 KiB per subscriber):\n\n${memory}\n\nDelay from each event's commit (\`outbox.created_at\`, the envelope's \`occurredAt\`) to its arrival at each subscriber:\n\n${delivery}\n\nWhere the time goes, each from the event's commit: the relay's transaction taking it (\`outbox.published_at\`), JetStream storing it, and its first arrival at a subscriber (through the hub; the writes to all subscribers advance together through promise chains, so this includes much of the fan-out's CPU); the fan-out is an event's last arrival minus its first; delivery runs from the first submission until every subscriber had every event, and CPU is shared over that time (100 % = one core):\n\n${breakdown}${errors}`;
}
