/** The admin-sse scenario's tables (relay delay and memory, the jobs view's page load) and targets. */
import { count, kib, met, mib, ms, table } from "../report.ts";
import type { Settings } from "../settings.ts";
import type { AdminSseResult } from "./run.ts";

const TARGETS = { addedP99Ms: 20 };

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
      )}\n\nDelay the Admin adds per event and session (its arrival minus the Manager stream's, same event id, one clock):\n\n${table(
        [
          "events",
          "got every event",
          "samples",
          "p50 ms",
          "p99 ms",
          "max ms",
          "target p99",
          "closed while measured",
        ],
        [
          [
            count(relay.events),
            `${count(relay.receivedAll)} of ${count(relay.connected)}`,
            count(relay.added.samples),
            ms(relay.added.p50),
            ms(relay.added.p99),
            ms(relay.added.max),
            `<= ${TARGETS.addedP99Ms} ms`,
            count(relay.lost),
          ],
        ],
      )}${relay.firstError ? `\n\nFirst connect error: ${relay.firstError}` : ""}`
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
      `Admin relay adds p99 <= ${TARGETS.addedP99Ms} ms at ${count(settings.adminSse.sessions)} sessions`,
      relay ? `${ms(relay.added.p99)} ms` : "n/a",
      met(relay && Number.isFinite(relay.added.p99) ? relay.added.p99 <= TARGETS.addedP99Ms : undefined),
    ],
  ];
}
