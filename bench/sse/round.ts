/**
 * One delivery round, the same for the Manager and the floor: `events` sends at a steady rate,
 * then waiting until every subscriber still read has every one of them (or the timeout), with
 * the CPU each side used meanwhile.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Spread } from "../shared/stats.ts";
import type { DelayRound } from "./arrivals.ts";
import { type CpuShares, cpuWindow } from "./cpu-window.ts";
import type { SubscriberLevel } from "./subscriber-processes.ts";

const DELIVERY_TIMEOUT_MS = 30_000;

export interface SseRound {
  /** Every subscriber read, or a spread sample of them (the others' bytes wait in the kernel). */
  sampled: boolean;
  /** From each event's reference time (the Manager: its commit; the floor: the bench asking) to its arrivals. */
  arrivals: DelayRound;
  /** From each event's fan-out start (the floor: the bench asking) to its arrivals. */
  fromFanOut: DelayRound;
  /** Per event, from its fan-out start until every write was handed to the kernel. */
  written: Spread;
  cpu: CpuShares;
}

/** The round's sends and CPU; arrivals are compared once the subscribers are closed. */
export async function deliver(
  level: SubscriberLevel,
  serverPid: number,
  events: number,
  eventsPerSecond: number,
  send: (index: number) => Promise<void>,
): Promise<CpuShares> {
  const { received, readers } = await level.status();
  const cpu = cpuWindow([serverPid], level.pids);
  const started = performance.now();
  for (let index = 0; index < events; index++) {
    const due = started + (index * 1000) / eventsPerSecond;
    if (due > performance.now()) await sleep(due - performance.now());
    await send(index);
  }
  await level.waitForReceipts(received + events * readers, performance.now() + DELIVERY_TIMEOUT_MS);
  return cpu();
}
