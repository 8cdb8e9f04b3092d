/**
 * The floor under the Manager's fan-out: the Admin console bench's bare node:http server
 * (bench/admin-sse/bare-server.ts), holding as many SSE responses as the level has subscribers
 * and writing each event to every one with `res.write`, nothing else: no hub, no filters, no
 * checks. The same subscriber processes read it, in the same two rounds. What it shows is what
 * one Node process on this machine needs to write one event to that many sockets.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "../scenario.ts";
import { raiseOpenFilesLimit } from "../shared/proc.ts";
import { spread } from "../shared/stats.ts";
import { compareArrivals } from "./arrivals.ts";
import { deliver, type SseRound } from "./round.ts";
import { SPARE_FILES, SubscriberLevel, type SubscriberProcess } from "./subscriber-processes.ts";

const BARE_SERVER = fileURLToPath(new URL("../admin-sse/bare-server.ts", import.meta.url));

const wallNow = () => performance.timeOrigin + performance.now();

export async function measureFloor(
  context: BenchContext,
  subscribers: number,
  children: SubscriberProcess[],
): Promise<SseRound[]> {
  const settings = context.settings.sse;
  const server = spawn(process.execPath, ["--import", "tsx", BARE_SERVER], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const stop = () => {
    server.stdin.end();
    server.kill();
  };
  context.cleanup.defer("stop the bare SSE server", async () => stop());
  const written = new Map<string, number>();
  const port = await new Promise<number>((resolve) => {
    createInterface({ input: server.stdout }).on("line", (line) => {
      const [kind, first, second] = line.split(" ");
      if (kind === "port") resolve(Number(first));
      if (kind === "written" && first !== undefined) written.set(first, Number(second));
    });
  });
  raiseOpenFilesLimit(server.pid as number, subscribers + SPARE_FILES, context.log);
  try {
    const level = await SubscriberLevel.connect(
      { baseUrl: `http://127.0.0.1:${port}`, path: "/", token: context.token },
      subscribers,
      settings.perProcess,
      children,
    );
    const rounds: { sampled: boolean; asked: Map<string, number>; cpu: SseRound["cpu"] }[] = [];
    for (const sampled of [false, true]) {
      if (sampled) level.sample(settings.sampledReaders);
      const asked = new Map<string, number>();
      const cpu = await deliver(
        level,
        server.pid as number,
        settings.jobs,
        settings.jobsPerSecond,
        async (index) => {
          const id = `floor-${subscribers}-${sampled ? "sampled" : "all"}-${index}`;
          asked.set(id, wallNow());
          server.stdin.write(`write ${id}\n`);
        },
      );
      rounds.push({ sampled, asked, cpu });
    }
    const arrivals = (await level.close()).flatMap((result) => result.subscribers);
    return rounds.map(({ sampled, asked, cpu }) => {
      const round = compareArrivals(arrivals, asked, sampled);
      return {
        sampled,
        arrivals: round,
        fromFanOut: round,
        written: spread([...asked.keys()].map((id) => written.get(id) ?? Number.NaN)),
        cpu,
      };
    });
  } finally {
    stop();
  }
}
