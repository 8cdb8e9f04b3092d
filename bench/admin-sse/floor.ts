/**
 * The same fan-out without the Admin: bare-server.ts holds as many SSE responses as the relay
 * round had sessions, and writes each event to all of them. The bench reads the same spread
 * sample of them; the delay is from the bench asking for the write to each reader's arrival.
 * What this shows is what one Node process on this machine needs to write one event to that
 * many sockets, the part of the relay's delay no relay code can remove.
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "../scenario.ts";
import { spread } from "../shared/stats.ts";
import { closeFollowers, compareArrivals, type DelayRound, openFollowers } from "./followers.ts";

const BARE_SERVER = fileURLToPath(new URL("./bare-server.ts", import.meta.url));
const DELIVERY_TIMEOUT_MS = 10_000;

export interface FloorResult extends DelayRound {
  /** The bare server's own time to hand one event's writes to the kernel, per event. */
  written: ReturnType<typeof spread>;
}

export async function measureFloor(context: BenchContext, sessions: number): Promise<FloorResult> {
  const settings = context.settings.adminSse;
  const child = spawn(process.execPath, ["--import", "tsx", BARE_SERVER], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  context.cleanup.defer("stop the bare SSE server", async () => {
    child.stdin.end();
    child.kill();
  });
  const lines = createInterface({ input: child.stdout });
  const written = new Map<string, number>();
  const port = await new Promise<number>((resolve) => {
    lines.on("line", (line) => {
      const [kind, first, second] = line.split(" ");
      if (kind === "port") resolve(Number(first));
      if (kind === "written" && first !== undefined) written.set(first, Number(second));
    });
  });
  const followers = await openFollowers(
    `http://127.0.0.1:${port}`,
    "/",
    Array.from({ length: sessions }, () => ""),
  );
  try {
    const connected = followers.filter((follower) => follower.connected);
    const step = Math.max(1, Math.floor(connected.length / settings.sampledReaders));
    const readers = connected.filter((_, index) => index % step === 0);
    for (const follower of connected) if (!readers.includes(follower)) follower.socket.pause();
    const askedAt = new Map<string, number>();
    for (let event = 0; event < settings.events; event++) {
      const id = `floor-${event}`;
      askedAt.set(id, performance.now());
      child.stdin.write(`write ${id}\n`);
      await sleep(1000 / settings.eventsPerSecond);
    }
    const deadline = performance.now() + DELIVERY_TIMEOUT_MS;
    const delivered = () =>
      readers.every((reader) => [...askedAt.keys()].every((id) => reader.arrivals.has(id)));
    while (performance.now() < deadline && !delivered()) await sleep(100);
    return { ...compareArrivals(readers, [...askedAt]), written: spread([...written.values()]) };
  } finally {
    closeFollowers(followers);
    child.stdin.end();
  }
}
