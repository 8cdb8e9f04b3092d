/** The portal scenario's table: GET /api/v1/me with its sessions and connected apps. */
import { ms, table } from "../report.ts";
import type { Settings } from "../settings.ts";
import { CONNECTED_APPS, type PortalResult, SESSIONS } from "./run.ts";

/** Issue 23: the snapshot answers within 20 ms at the 99th percentile. */
export const ME_P99_TARGET_MS = 20;

export function portalReport(result: PortalResult | undefined, settings: Settings): string {
  const title = `## Account portal: GET /api/v1/me (${SESSIONS} sessions, ${CONNECTED_APPS} connected apps, one caller, ${settings.portal.seconds} s)`;
  if (!result) return `${title}\n\nnot measured`;
  const { me } = result;
  return [
    title,
    `One Node Manager serving its provider; the account's token is of the account-portal audience, so every request also runs the standing check. The snapshot counted ${result.sessionCount} sessions; the provider holds grants of ${result.grantedClients} clients.`,
    table(
      ["requests", "per second", "p50 ms", "p99 ms", "failed"],
      [[String(me.succeeded), me.perSecond.toFixed(0), ms(me.p50Ms), ms(me.p99Ms), String(me.failed)]],
    ),
  ].join("\n\n");
}

export function portalTargets(result: PortalResult | undefined): string[][] {
  const p99 = result?.me.p99Ms;
  return [
    [
      `GET /api/v1/me p99 ≤ ${ME_P99_TARGET_MS} ms (${SESSIONS} sessions, ${CONNECTED_APPS} apps)`,
      p99 === undefined ? "not measured" : `${ms(p99)} ms`,
      p99 === undefined ? "—" : p99 <= ME_P99_TARGET_MS ? "yes" : "no",
    ],
  ];
}
