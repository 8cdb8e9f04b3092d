/** Markdown output: every number is printed, none is asserted. */
import type { Spread } from "./cluster.ts";
import type { DispatchResult } from "./dispatch.ts";
import type { HeartbeatResult, LagSummary } from "./heartbeats.ts";
import { type ListSizeResult, PAGE } from "./list.ts";
import { type LoadResult, median } from "./load.ts";
import type { OverheadResult } from "./overhead.ts";
import type { RelayResult } from "./relay.ts";
import { BENCH_RUNTIMES, type BenchRuntime, type ScenarioName } from "./settings.ts";
import type { SseResult } from "./sse.ts";
import type { TinyJobsResult } from "./tiny-jobs.ts";
import type { UploadResult } from "./upload.ts";

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
  /** A TJM job's submit -> COMPLETED over the plain ffmpeg command's wall time, at most. */
  overheadWallRatio: 1.05,
  /** ffmpeg's fps inside the agent over the plain command's, at least. */
  overheadFpsRatio: 0.97,
  /** Submit -> accepted, and submit -> ffmpeg spawned, with one idle Worker. */
  dispatchP50Ms: 10,
  dispatchP99Ms: 50,
  /** The Worker's uploader over a plain lib-storage Upload of the same file, at its defaults. */
  uploadRatio: 0.9,
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
export type ThroughputKey = BenchRuntime | "pgBoss" | "rawInsert";

export interface Results {
  throughput: Partial<Record<ThroughputKey, LoadResult[]>>;
  list?: ListSizeResult[];
  relay?: RelayResult;
  heartbeats?: HeartbeatResult;
  sse?: SseResult;
  overhead?: OverheadResult;
  dispatch?: DispatchResult;
  tinyJobs?: TinyJobsResult;
  upload?: UploadResult;
  failures: string[];
}

const RUNTIME_LABELS: Record<BenchRuntime, string> = {
  node: "Manager on Node 24",
  deno: "Manager on Deno",
  node20: "Manager on Node 20",
};

function labelled(results: Results, keys: [ThroughputKey, string][]): [string, LoadResult][] {
  return keys.flatMap(([key, label]) =>
    (results.throughput[key] ?? []).map((result): [string, LoadResult] => [label, result]),
  );
}

export function submitSection(results: Results): string {
  const entries = labelled(
    results,
    BENCH_RUNTIMES.map((runtime): [ThroughputKey, string] => [runtime, RUNTIME_LABELS[runtime]]),
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
  const runtimes = BENCH_RUNTIMES.filter((runtime) => results.throughput[runtime]);
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
      ...(bothNodes
        ? [ratio(at(results.throughput.node, level) / at(results.throughput.node20, level))]
        : []),
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
  if (scenarios.includes("overhead")) overheadTargets(results.overhead, rows);
  if (scenarios.includes("dispatch")) dispatchTargets(results.dispatch, rows);
  if (scenarios.includes("tiny-jobs")) tinyJobsTargets(results.tinyJobs, rows);
  if (scenarios.includes("upload")) uploadTargets(results.upload, rows);
  return `## Targets (printed, not asserted)\n\n${table(["target", "measured", "met"], rows)}`;
}

function submitTargets(results: Results, concurrency: number[], rows: string[][]): void {
  const node64 = at(results.throughput.node, 64);
  rows.push([
    `>= ${count(TARGETS.submitsPerSecondAt64OnNode)} submits/s at 64 clients on Node`,
    Number.isFinite(node64) ? `${count(node64)}/s` : "n/a",
    met(Number.isFinite(node64) ? node64 >= TARGETS.submitsPerSecondAt64OnNode : undefined),
  ]);
  // Targets hold for the runtimes TJM ships on; Node 20 is only measured for comparison.
  for (const runtime of (["node", "deno"] as const).filter((name) => results.throughput[name])) {
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

const seconds = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : "n/a");
const fine = (value: number) => (Number.isFinite(value) ? `${value.toFixed(3)}x` : "n/a");
const fps = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : "n/a");

function overheadTargets(result: OverheadResult | undefined, rows: string[][]): void {
  const wall = result ? result.tjmSeconds / result.rawSeconds : Number.NaN;
  const speed = result ? result.tjmFps / result.rawFps : Number.NaN;
  rows.push([
    `720p job from S3 to S3 <= ${TARGETS.overheadWallRatio.toFixed(2)}x the plain ffmpeg command's wall time (medians)`,
    fine(wall),
    met(Number.isFinite(wall) ? wall <= TARGETS.overheadWallRatio : undefined),
  ]);
  rows.push([
    `ffmpeg fps in the job >= ${TARGETS.overheadFpsRatio.toFixed(2)}x the plain command's (medians)`,
    fine(speed),
    met(Number.isFinite(speed) ? speed >= TARGETS.overheadFpsRatio : undefined),
  ]);
}

export function overheadSection(results: Results): string {
  const title = "## Overhead: one 720p transcode, plain ffmpeg vs a TJM job (S3 to S3 on loopback)";
  const result = results.overhead;
  if (!result) return `${title}\n\nnot measured`;
  const wall = result.tjmSeconds / result.rawSeconds;
  const speed = result.tjmFps / result.rawFps;
  const busy = (runs: { busyCores: number }[]) => median(runs.map((run) => run.busyCores));
  // Cores busy with anything but ffmpeg and (for TJM) the Manager, the agent and s3rver.
  const others = (run: {
    busyCores: number;
    cpuSeconds: number;
    seconds: number;
    platformCpuSeconds?: number;
  }) => run.busyCores - (run.cpuSeconds + (run.platformCpuSeconds ?? 0)) / run.seconds;
  const pairs = result.raw.flatMap((raw, index) => {
    const tjm = result.tjm[index];
    return tjm ? [{ index, raw, tjm, others: Math.max(others(raw), others(tjm)) }] : [];
  });
  const quietest = pairs.reduce<(typeof pairs)[number] | undefined>(
    (best, pair) => (best && best.others <= pair.others ? best : pair),
    undefined,
  );
  const summary = table(
    [`median of ${result.raw.length} runs each`, "plain ffmpeg", "TJM job", "TJM / plain", "target"],
    [
      [
        "wall time s (plain: spawn to exit; TJM: submit to COMPLETED)",
        seconds(result.rawSeconds),
        seconds(result.tjmSeconds),
        fine(wall),
        `<= ${TARGETS.overheadWallRatio.toFixed(2)}x`,
      ],
      ["same, median of the per-pair ratios", "", "", fine(result.pairedWallRatio), ""],
      [
        `same, the pair with the least other load (pair ${quietest ? quietest.index + 1 : "n/a"})`,
        seconds(quietest?.raw.seconds ?? Number.NaN),
        seconds(quietest?.tjm.seconds ?? Number.NaN),
        fine(quietest ? quietest.tjm.seconds / quietest.raw.seconds : Number.NaN),
        "",
      ],
      [
        "ffmpeg's fps (its last progress block: frames / its run time)",
        fps(result.rawFps),
        fps(result.tjmFps),
        fine(speed),
        `>= ${TARGETS.overheadFpsRatio.toFixed(2)}x`,
      ],
      ["same, median of the per-pair ratios", "", "", fine(result.pairedFpsRatio), ""],
      [
        `same, the pair with the least other load (pair ${quietest ? quietest.index + 1 : "n/a"})`,
        fps(quietest?.raw.fps ?? Number.NaN),
        fps(quietest?.tjm.fps ?? Number.NaN),
        fine(quietest ? quietest.tjm.fps / quietest.raw.fps : Number.NaN),
        "",
      ],
      [
        "ffmpeg's own run s (TJM: spawned to its last progress message)",
        seconds(result.rawSeconds),
        seconds(result.ffmpegInAgentSeconds),
        fine(result.ffmpegInAgentSeconds / result.rawSeconds),
        "",
      ],
      [
        "ffmpeg's CPU s, user + system (TJM: with the agent's two ffprobes)",
        seconds(result.rawCpuSeconds),
        seconds(result.tjmCpuSeconds),
        fine(result.tjmCpuSeconds / result.rawCpuSeconds),
        "",
      ],
      [
        "whole machine busy during the run, cores (ffmpeg included)",
        seconds(busy(result.raw)),
        seconds(busy(result.tjm)),
        "",
        "",
      ],
    ],
  );
  const runs = table(
    [
      "pair",
      "order",
      "plain s / fps / CPU s",
      "TJM s / fps / CPU s",
      "TJM ffmpeg s",
      "TJM / plain wall, fps",
      "machine busy plain / TJM (cores)",
      "of which others' (not ffmpeg, not TJM)",
      "TJM's processes CPU s",
      "load avg at start",
    ],
    result.raw.map((raw, index) => {
      const tjm = result.tjm[index];
      if (!tjm) return [String(index + 1), "", "", "", "", "", "", "", "", ""];
      return [
        String(index + 1),
        index % 2 === 0 ? "plain, TJM" : "TJM, plain",
        `${seconds(raw.seconds)} / ${fps(raw.fps)} / ${seconds(raw.cpuSeconds)}`,
        `${seconds(tjm.seconds)} / ${fps(tjm.fps)} / ${seconds(tjm.cpuSeconds)}`,
        seconds(tjm.ffmpegSeconds),
        `${fine(tjm.seconds / raw.seconds)}, ${fine(tjm.fps / raw.fps)}`,
        `${seconds(raw.busyCores)} / ${seconds(tjm.busyCores)}`,
        `${seconds(others(raw))} / ${seconds(others(tjm))}`,
        seconds(tjm.platformCpuSeconds),
        `${raw.loadAverage.toFixed(1)} / ${tjm.loadAverage.toFixed(1)}`,
      ];
    }),
  );
  const stages = result.stageMedians;
  const steps: [string, number, number][] = [
    ["Manager applied `accepted` (attempt RUNNING)", stages.accepted, stages.accepted],
    [
      "agent spawned ffmpeg (input downloaded and probed, `started` stored)",
      stages.ffmpegSpawned,
      stages.ffmpegSpawned - stages.accepted,
    ],
    ["ffmpeg's last progress message", stages.ffmpegDone, stages.ffmpegDone - stages.ffmpegSpawned],
    [
      "Manager applied `completed` (output probed, uploaded to staging, log uploaded)",
      stages.completionAccepted,
      stages.completionAccepted - stages.ffmpegDone,
    ],
    [
      "job COMPLETED (staged output promoted, manifest written)",
      stages.completed,
      stages.completed - stages.completionAccepted,
    ],
  ];
  const breakdown = table(
    ["step of the TJM job", "ms from submit (median)", "ms since the previous step"],
    steps.map(([label, at, step]) => [label, ms(at), ms(step)]),
  );
  const outsideMs = median(result.tjm.map((run) => (run.seconds - run.ffmpegSeconds) * 1000));
  return `${title}\n\nInput: ${result.clipSeconds} s ${result.clipSize} at ${result.clipRate} fps, testsrc2 + 440 Hz sine, H.264 CRF 18 + AAC (${mib(result.clipBytes)}). Output: the plan's H.264 720p at preset "fast" (x264 veryfast, CRF 23) + AAC 128k in MP4. One Worker agent (Bun), s3rver in a child process, one Manager on Node. Runs go in adjacent pairs, plain first in odd pairs and TJM first in even ones. The plain command is the agent's own (buildFfmpegCommand on the plan as stored by the Manager, probeMedia of the clip):\n\n\`\`\`text\nffmpeg ${result.args.join(" ")}\n\`\`\`\n\n${summary}\n\n${runs}\n\nffmpeg is CPU-bound on every core it finds, so anything else busy on the machine slows whichever contender runs at the time: compare the pairs whose "others'" load (the machine's busy cores less ffmpeg's CPU and, for TJM, less the CPU of the Manager, the agent and s3rver, shown apart) is near zero. ffmpeg's CPU seconds hardly depend on that load. Where a TJM job's time goes (medians of each step; median time outside ffmpeg per job ${ms(outsideMs)} ms):\n\n${breakdown}`;
}

function spreadRow(label: string, value: Spread, target = ""): string[] {
  return [label, ms(value.p50), ms(value.p99), ms(value.max), target];
}

function dispatchTargets(result: DispatchResult | undefined, rows: string[][]): void {
  for (const [label, value] of [
    ["submit -> accepted", result?.accepted],
    ["submit -> ffmpeg spawned", result?.ffmpegSpawned],
  ] as const) {
    rows.push([
      `${label} p50 <= ${TARGETS.dispatchP50Ms} ms (one idle Worker)`,
      value ? `${ms(value.p50)} ms` : "n/a",
      met(value ? value.p50 <= TARGETS.dispatchP50Ms : undefined),
    ]);
    rows.push([
      `${label} p99 <= ${TARGETS.dispatchP99Ms} ms (one idle Worker)`,
      value ? `${ms(value.p99)} ms` : "n/a",
      met(value ? value.p99 <= TARGETS.dispatchP99Ms : undefined),
    ]);
  }
}

export function dispatchSection(results: Results): string {
  const title = "## Dispatch: submit to accepted and to ffmpeg spawned, one idle Worker";
  const result = results.dispatch;
  if (!result) return `${title}\n\nnot measured`;
  const target = `p50 <= ${TARGETS.dispatchP50Ms}, p99 <= ${TARGETS.dispatchP99Ms}`;
  const latency = table(
    ["from the submit (bench sends the POST) to", "p50 ms", "p99 ms", "max ms", "target"],
    [
      spreadRow("201 read by the bench", result.answered),
      spreadRow("job row written (`jobs.created_at`)", result.created),
      spreadRow("lease written by the scheduler (`attempts.dispatched_at`)", result.dispatched),
      spreadRow(
        "relay's transaction publishing the lease began (`outbox.published_at`)",
        result.leasePublished,
      ),
      spreadRow('agent stored its `accepted` report (its "lease accepted" log line)', result.agentAccepted),
      spreadRow(
        "**accepted**: Manager applied it (`attempts.accepted_at`, job RUNNING)",
        result.accepted,
        target,
      ),
      spreadRow("job.updated QUEUED -> RUNNING arrived at an SSE subscriber", result.runningEvent),
      spreadRow('**ffmpeg spawned** (agent\'s "encoding" log line)', result.ffmpegSpawned, target),
    ],
  );
  const hops = table(
    ["hop", "p50 ms", "p99 ms", "max ms", ""],
    [
      spreadRow("lease written -> relay publishing it", result.dispatchedToPublished),
      spreadRow("relay publishing the lease -> Manager applied `accepted`", result.publishedToAccepted),
      spreadRow(
        "accepted -> ffmpeg spawned (S3 download, ffprobe, `started` report)",
        result.acceptedToSpawned,
      ),
      spreadRow("of which, on their own: one GET of the clip from s3rver", result.downloadAlone),
      spreadRow("of which, on their own: one ffprobe of the clip", result.probeAlone),
    ],
  );
  return `${title}\n\n${result.jobs} one-second jobs (256x144 in, 144p "fastest" + AAC out), one at a time after 3 unmeasured ones, each submitted once the previous was COMPLETED and 200 ms had passed; ${result.failed} not COMPLETED, ${result.retried} retried (failed attempts: ${result.failedAttempts.join("; ") || "none"}); ${result.seconds.toFixed(0)} s in all; the whole machine was ${percent(result.machineBusyCores)} busy of ${result.cores} cores meanwhile (a quiet machine is mostly idle here: one job at a time). Timestamps: the bench's clock for the submit, PostgreSQL's \`now()\` of each recording transaction, the agent's log lines (whole ms); one machine, one clock. Percentiles are nearest-rank (with fewer than 100 jobs p99 is the largest).\n\n${latency}\n\n${hops}\n\nFor scale: graphile-worker's add -> start averages about 4 ms; Temporal Cloud's minimum is about 100 ms.`;
}

function tinyJobsTargets(result: TinyJobsResult | undefined, rows: string[][]): void {
  rows.push([
    `tiny jobs: jobs/s with ${result?.workers ?? "n/a"} Workers (no target set)`,
    result
      ? `${result.jobsPerSecond.toFixed(2)} jobs/s, Manager CPU ${percent(result.managerCpuShare)}`
      : "n/a",
    "n/a",
  ]);
}

export function tinyJobsSection(results: Results): string {
  const title = "## Tiny jobs: many one-second jobs through several Workers";
  const result = results.tinyJobs;
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
    ["same, with npm, sh and tsx's CLI above it", percent(result.managerTreeCpuShare), ""],
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

export function uploadSection(results: Results): string {
  const title = "## Upload: the Worker's uploader against lib-storage";
  const result = results.upload;
  if (!result) return `${title}\n\nnot measured`;
  const rows = result.measurements.map((m) => [
    `${m.partSizeMiB} MiB${m.isDefault ? " (default)" : ""}`,
    String(m.concurrency),
    `${m.uploaderMiBps.toFixed(0)} (${m.uploaderRuns.map((v) => v.toFixed(0)).join(", ")})`,
    `${m.libStorageMiBps.toFixed(0)} (${m.libStorageRuns.map((v) => v.toFixed(0)).join(", ")})`,
    ratio(m.uploaderMiBps / m.libStorageMiBps),
  ]);
  return `${title}\n\n${count(result.fileMiB)} MiB of random bytes from local disk to OpenStack Swift 2.30 s3api on loopback (started in ${result.swiftStartSeconds.toFixed(1)} s), one S3 client for both (checksums WHEN_REQUIRED, path style). Each cell is the median MiB/s, every run in brackets; the two contenders alternate who goes first. For each part the SDK computes the SHA-256 it signs, for both; the uploader also hashes the whole file (SHA-256, for the manifest) and rewrites its state file after every part.\n\n${table(["part size", "parts in flight", "uploader MiB/s", "lib-storage MiB/s", "ratio"], rows)}`;
}

function uploadTargets(result: UploadResult | undefined, rows: string[][]): void {
  const chosen = result?.measurements.find((m) => m.isDefault);
  const value = chosen ? chosen.uploaderMiBps / chosen.libStorageMiBps : Number.NaN;
  rows.push([
    `uploader >= ${TARGETS.uploadRatio.toFixed(1)}x lib-storage at the Worker's defaults`,
    chosen
      ? `${ratio(value)} (${chosen.uploaderMiBps.toFixed(0)} vs ${chosen.libStorageMiBps.toFixed(0)} MiB/s)`
      : "n/a (defaults not among the configurations run)",
    met(chosen ? value >= TARGETS.uploadRatio : undefined),
  ]);
}
