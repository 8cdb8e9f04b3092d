/** The logout-all scenario's table. */
import { count, ms, table } from "../report.ts";
import { spread } from "../shared/stats.ts";
import { ACCOUNTS, CLIENTS, type LogoutAllResult } from "./run.ts";

export function logoutAllReport(result: LogoutAllResult | undefined): string {
  const row = (what: string, values: number[] | undefined) => {
    const summary = spread(values ?? []);
    return [what, count(summary.samples), ms(summary.p50), ms(summary.max)];
  };
  const rows = [
    row("POST /api/v1/me/logout/all answered", result?.requestMs),
    row("every back-channel logout received", result?.allLogoutsMs),
  ];
  return `## Log out a browser: ${ACCOUNTS} remembered accounts x ${CLIENTS} clients with back-channel logout (${count(result?.sessionsEnded ?? Number.NaN)} sessions, ${count(result?.logoutsQueued ?? Number.NaN)} logouts per request)\n\n${table(["from the request's start until", "rounds", "p50 ms", "max ms"], rows)}`;
}

export function logoutAllTargets(): string[][] {
  return [];
}
