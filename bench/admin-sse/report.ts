/** The admin-sse scenario's tables (relay delay and memory, the jobs view's page load) and targets. */
import { count, kib, met, mib, ms, table } from "../report.ts";
import type { Settings } from "../settings.ts";
import type { FloorResult } from "./floor.ts";
import type { AdminSseResult, DelayRound } from "./run.ts";

const TARGETS = { addedP99Ms: 20 };

function floorSection(floor: FloorResult | undefined): string {
  if (floor === undefined) return "";
  return `\n\nThe floor: a bare node:http process (\`bench/admin-sse/bare-server.ts\`) writing each event with \`res.write\` to as many SSE responses, nothing else, read by the same spread sample; delay from the bench asking for the write to arrival, and the bare process's own time until every write is handed to the kernel:\n\n${table(
    [
      "readers",
      "events",
      "got every event",
      "p50 ms",
      "p99 ms",
      "max ms",
      "writes handed over p50 ms",
      "max ms",
    ],
    [
      [
        count(floor.readers),
        count(floor.events),
        `${count(floor.receivedAll)} of ${count(floor.readers)}`,
        ms(floor.added.p50),
        ms(floor.added.p99),
        ms(floor.added.max),
        ms(floor.written.p50),
        ms(floor.written.max),
      ],
    ],
  )}`;
}

function delayRow(round: string, measured: DelayRound): string[] {
  return [
    round,
    count(measured.readers),
    count(measured.events),
    `${count(measured.receivedAll)} of ${count(measured.readers)}`,
    count(measured.added.samples),
    ms(measured.added.p50),
    ms(measured.added.p99),
    ms(measured.added.max),
    `<= ${TARGETS.addedP99Ms} ms`,
  ];
}

export function adminSseReport(result: AdminSseResult | undefined, settings: Settings): string {
  const title = "## Admin console: the `/api/events` relay and the jobs view";
  const relay = result?.relay;
  const pageLoad = result?.pageLoad;
  const relaySection = relay
    ? `Sessions following \`/api/events\` through one Admin process, against one follower of the Manager's own stream (the Admin process's RSS; per session = (connected − before) / connected):\n\n${table(
        [
          "sessions",
          "connected",
          "connect s",
          "RSS before",
          "RSS connected",
          "RSS after events",
          "per session",
        ],
        [
          [
            count(relay.sessions),
            count(relay.connected),
            relay.connectSeconds.toFixed(1),
            mib(relay.rssBaselineBytes),
            mib(relay.rssConnectedBytes),
            mib(relay.rssAfterEventsBytes),
            kib(relay.bytesPerSession),
          ],
        ],
      )}\n\nDelay the Admin adds per event and session (its arrival minus the Manager stream's, same event id, one clock). Every session is written to in both rounds; in the first the bench reads all of them in its one thread, so an event's last reader also waits for the bench to read the others; in the second a spread sample is read while the others' bytes wait in the kernel:\n\n${table(
        [
          "round",
          "readers",
          "events",
          "got every event",
          "samples",
          "p50 ms",
          "p99 ms",
          "max ms",
          "target p99",
        ],
        [
          delayRow("every session read", relay.everyReader),
          delayRow("sampled readers", relay.sampledReaders),
        ],
      )}\n\nRelay streams the Admin closed while measured: ${count(relay.lost)}.${floorSection(result?.floor)}${relay.firstError ? `\n\nFirst connect error: ${relay.firstError}` : ""}`
    : "Relay: not measured";
  const pageSection = pageLoad
    ? `The jobs view (\`/jobs\`, first page of 20) in Chromium with ${count(pageLoad.storedJobs)} jobs stored, ${settings.adminSse.pageLoads} loads after one unmeasured:\n\n${table(
        ["measured from", "loads", "p50 ms", "max ms"],
        [
          [
            "navigation start (page clock) to first rendered row",
            count(pageLoad.firstRow.samples),
            ms(pageLoad.firstRow.p50),
            ms(pageLoad.firstRow.max),
          ],
          [
            "page.goto called (bench clock) to first row seen",
            count(pageLoad.wall.samples),
            ms(pageLoad.wall.p50),
            ms(pageLoad.wall.max),
          ],
        ],
      )}`
    : "Page load: not measured";
  return `${title}\n\n${relaySection}\n\n${pageSection}`;
}

export function adminSseTargets(result: AdminSseResult | undefined, settings: Settings): string[][] {
  const relay = result?.relay;
  return [
    [
      `Admin relay adds p99 <= ${TARGETS.addedP99Ms} ms at ${count(settings.adminSse.sessions)} sessions (sampled readers)`,
      relay ? `${ms(relay.sampledReaders.added.p99)} ms` : "n/a",
      met(
        relay && Number.isFinite(relay.sampledReaders.added.p99)
          ? relay.sampledReaders.added.p99 <= TARGETS.addedP99Ms
          : undefined,
      ),
    ],
  ];
}
