/** The SSE scenario's tables (memory, delivery, where the time goes, the floor) and targets. */
import { availableParallelism } from "node:os";
import { count, kib, met, mib, ms, percent, table } from "../report.ts";
import type { SseRound } from "./round.ts";
import type { SseLevelResult, SseResult } from "./run.ts";

const TARGETS = {
  sseP99Ms: 100,
  sseBytesPerSubscriber: 25 * 1024,
};
/** Levels with a delivery target. */
const TARGET_LEVELS = [1000, 10_000];

const readBy = (round: SseRound) =>
  round.sampled ? `a sample (${count(round.arrivals.readers)})` : "every one";
const cores = (share: number) => (Number.isFinite(share) ? share.toFixed(2) : "n/a");
const p50p99 = (spread: { p50: number; p99: number }) => `${ms(spread.p50)} / ${ms(spread.p99)}`;
const p50max = (spread: { p50: number; max: number }) => `${ms(spread.p50)} / ${ms(spread.max)}`;

function roundsOf(levels: SseLevelResult[], pick: (level: SseLevelResult) => SseRound[] | undefined) {
  return levels.flatMap((level) => (pick(level) ?? []).map((round) => ({ level, round })));
}

export function sseReport(result: SseResult | undefined): string {
  const title = "## SSE fan-out: GET /api/v1/operations/events on one Manager (Node)";
  const levels = result?.levels ?? [];
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
  const managerRounds = roundsOf(levels, (level) => level.rounds);
  const delivery = table(
    [
      "subscribers",
      "read",
      "events",
      "got every event",
      "deliveries",
      "p50 ms",
      "p99 ms",
      "max ms",
      "target p99",
    ],
    managerRounds.map(({ level, round }) => [
      count(level.subscribers),
      readBy(round),
      count(round.arrivals.events),
      `${count(round.arrivals.receivedAll)} of ${count(round.arrivals.readers)}`,
      `${count(round.arrivals.deliveries)} of ${count(round.arrivals.events * round.arrivals.readers)}`,
      ms(round.arrivals.delay.p50),
      ms(round.arrivals.delay.p99),
      ms(round.arrivals.delay.max),
      TARGET_LEVELS.includes(level.subscribers) && !round.sampled ? `<= ${TARGETS.sseP99Ms} ms` : "",
    ]),
  );
  const hops = table(
    [
      "subscribers",
      "read",
      "commit → relay took it p50",
      "→ in JetStream p50",
      "→ fan-out started p50",
      "fan-out started → every write handed to the kernel p50 / max",
      "fan-out started → received p50 / p99",
      "commit → received p50 / p99",
      "first to last arrival p50 / max",
    ],
    managerRounds.map(({ level, round }) => [
      count(level.subscribers),
      readBy(round),
      ms(level.relayP50Ms),
      ms(level.storedP50Ms),
      ms(level.fanOutStartP50Ms),
      p50max(round.written),
      p50p99(round.fromFanOut.delay),
      p50p99(round.arrivals.delay),
      p50max(round.arrivals.fanOut),
    ]),
  );
  const cpu = (rows: { level: SseLevelResult; round: SseRound }[], server: string) =>
    table(
      [
        "subscribers",
        "read",
        "delivery s",
        `${server} cores`,
        "subscriber processes cores",
        "bench cores",
        "rest of the machine cores",
        "machine busy",
        `${server} CPU per event`,
      ],
      rows.map(({ level, round }) => [
        count(level.subscribers),
        readBy(round),
        round.cpu.seconds.toFixed(1),
        cores(round.cpu.server),
        cores(round.cpu.subscribers),
        cores(round.cpu.bench),
        cores(round.cpu.others),
        percent(round.cpu.machine / availableParallelism()),
        round.arrivals.events > 0
          ? `${((round.cpu.server * round.cpu.seconds * 1000) / round.arrivals.events).toFixed(0)} ms`
          : "n/a",
      ]),
    );
  const floorRounds = roundsOf(levels, (level) => level.floor);
  const floor = table(
    [
      "subscribers",
      "read",
      "bare server: asked → every write handed to the kernel p50 / max",
      "bare server: asked → received p50 / p99",
      "Manager: fan-out started → every write handed to the kernel p50 / max",
      "Manager: fan-out started → received p50 / p99",
    ],
    floorRounds.map(({ level, round }) => {
      const manager = level.rounds.find((candidate) => candidate.sampled === round.sampled);
      return [
        count(level.subscribers),
        readBy(round),
        p50max(round.written),
        p50p99(round.arrivals.delay),
        manager ? p50max(manager.written) : "n/a",
        manager ? p50p99(manager.fromFanOut.delay) : "n/a",
      ];
    }),
  );
  const errors = levels
    .filter((level) => level.firstError || level.lost > 0)
    .map(
      (level) =>
        `\n\nAt ${count(level.subscribers)}: ${level.lost} subscriptions closed by the server while measured; first connect error: ${level.firstError ?? "none"}`,
    )
    .join("");
  return [
    title,
    "Manager memory (RSS of its node process; a bare Node SSE server holds about 12 KiB per subscriber):",
    memory,
    `Delay from each event's commit (\`outbox.created_at\`, the envelope's \`occurredAt\`) to its arrival at each subscriber read. Each level has two rounds: every subscriber read, then ${count(result?.sampledReaders ?? 0)} spread over them read while the Manager still writes to all (the others' bytes wait in the kernel), so the subscriber processes' CPU, on the same cores, no longer delays the arrivals:`,
    delivery,
    "Where the time goes, per event: the relay's transaction taking it (`outbox.published_at`), JetStream storing it, the Manager's fan-out starting (the hub's `event fanned out` debug line) and every subscriber's write handed to the kernel (the next turn of its event loop), then each arrival:",
    hops,
    "CPU while delivering (from the first submission until every subscriber read had every event; 1.00 = one core; the rest of the machine is PostgreSQL, NATS and anything else running):",
    cpu(managerRounds, "Manager"),
    "The floor: the Admin console bench's bare node:http server (`bench/admin-sse/bare-server.ts`) holding as many SSE responses and writing one frame of the same size to all with `res.write`, nothing else, read by the same subscriber processes in the same two rounds; next to it the Manager's own fan-out from the tables above:",
    floor,
    cpu(floorRounds, "bare server") + errors,
  ].join("\n\n");
}

export function sseTargets(result: SseResult | undefined): string[][] {
  const rows: string[][] = [];
  for (const subscribers of TARGET_LEVELS) {
    const level = result?.levels.find((candidate) => candidate.subscribers === subscribers);
    for (const sampled of [false, true]) {
      const round = level?.rounds.find((candidate) => candidate.sampled === sampled);
      rows.push([
        `SSE delivery p99 <= ${TARGETS.sseP99Ms} ms at ${count(subscribers)} subscribers, ${sampled ? "a sample read (client CPU removed)" : "every one read"}`,
        round ? `${ms(round.arrivals.delay.p99)} ms` : "n/a",
        met(round ? round.arrivals.delay.p99 <= TARGETS.sseP99Ms : undefined),
      ]);
    }
  }
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
  return rows;
}
