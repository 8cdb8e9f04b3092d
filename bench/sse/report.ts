/** The SSE scenario's tables (memory, delivery, where the time goes) and targets. */
import { count, kib, met, mib, ms, percent, table } from "../report.ts";
import type { SseResult } from "./run.ts";

const TARGETS = {
  sseP99MsAt1000: 100,
  sseBytesPerSubscriber: 25 * 1024,
};

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

export function sseTargets(result: SseResult | undefined): string[][] {
  const at1000 = result?.levels.find((level) => level.subscribers === 1000);
  const rows = [
    [
      `SSE delivery p99 <= ${TARGETS.sseP99MsAt1000} ms at 1,000 subscribers`,
      at1000 ? `${ms(at1000.p99Ms)} ms` : "n/a",
      met(at1000 ? at1000.p99Ms <= TARGETS.sseP99MsAt1000 : undefined),
    ],
  ];
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
