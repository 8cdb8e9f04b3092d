/** The heartbeat scenario's tables (load, transition lag) and targets. */
import { count, met, mib, ms, percent, table } from "../report.ts";
import type { Spread } from "../shared/stats.ts";
import type { HeartbeatResult } from "./run.ts";

const TARGETS = {
  /** Manager CPU while every Worker heartbeats, as a share of one core. */
  heartbeatCpuShare: 0.15,
  /** Connectivity transitions recorded within this many heartbeat intervals of their deadline. */
  transitionLagIntervals: 1,
};

function lagRow(label: string, deadline: string, lag: Spread, result: HeartbeatResult): string[] {
  return [
    label,
    deadline,
    `${lag.samples}/${result.stopped}`,
    ms(lag.p50),
    ms(lag.p99),
    ms(lag.max),
    `<= ${count(TARGETS.transitionLagIntervals * result.intervalMs)}`,
  ];
}

export function heartbeatReport(result: HeartbeatResult | undefined): string {
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
      ["same, with npm and sh above it", percent(result.treeCpuShare), ""],
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

export function heartbeatTargets(result: HeartbeatResult | undefined): string[][] {
  const rows = [
    [
      `Manager CPU < ${percent(TARGETS.heartbeatCpuShare)} of one core with every Worker heartbeating`,
      result ? `${percent(result.managerCpuShare)} (${count(result.workers)} Workers)` : "n/a",
      met(result ? result.managerCpuShare < TARGETS.heartbeatCpuShare : undefined),
    ],
  ];
  for (const [label, lag] of [
    ["SUSPECTED", result?.suspected],
    ["OFFLINE", result?.offline],
  ] as const) {
    const limit = result ? TARGETS.transitionLagIntervals * result.intervalMs : Number.NaN;
    const complete = result !== undefined && lag !== undefined && lag.samples === result.stopped;
    rows.push([
      `${label} recorded within one interval of its deadline (max lag)`,
      result && lag ? `${ms(lag.max)} ms (${lag.samples}/${result.stopped} recorded)` : "n/a",
      met(result && lag ? complete && lag.max <= limit : undefined),
    ]);
  }
  rows.push([
    "no transition of a Worker that kept heartbeating",
    result ? String(result.keptTransitions) : "n/a",
    met(result ? result.keptTransitions === 0 : undefined),
  ]);
  return rows;
}
