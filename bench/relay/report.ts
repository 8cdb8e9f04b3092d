/** The relay scenario's table and target. */
import { count, met, table } from "../report.ts";
import type { RelayResult } from "./run.ts";

const TARGETS = { relayRowsPerSecond: 5000 };

export function relayReport(result: RelayResult | undefined): string {
  const rows = result ? [[count(result.rows), result.seconds.toFixed(2), count(result.perSecond)]] : [];
  return `## Outbox relay: committed rows published to JetStream and marked\n\n${table(["rows", "seconds", "rows/s"], rows)}`;
}

export function relayTargets(result: RelayResult | undefined): string[][] {
  return [
    [
      `outbox relay >= ${count(TARGETS.relayRowsPerSecond)} rows/s`,
      result ? `${count(result.perSecond)} rows/s` : "n/a",
      met(result ? result.perSecond >= TARGETS.relayRowsPerSecond : undefined),
    ],
  ];
}
