/**
 * How much CPU one SSE frame costs to write to many open responses of one node:http server,
 * three ways: `res.write` (http frames each write as a chunk), the ready-made chunk written to
 * each socket (what the Manager's ResponseSink does), and the same corked until the next tick.
 * The clients live in this process and never read (their bytes wait in the kernel), so the
 * CPU measured is the server's writes alone. Alternating passes; the second pass's medians are
 * printed. Not a scenario: `npx tsx bench/sse/write-paths.ts [responses]` (default 9,000, two
 * file descriptors each, within a 20,000 open-files limit).
 */
import { createServer, type ServerResponse } from "node:http";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

const RESPONSES = Number(process.argv[2] ?? 9000);
const EVENTS = 20;
const CONNECT_CONCURRENCY = 200;

/** A job.created frame's size as the Manager writes it (about 450 bytes). */
const frame = Buffer.from(`id: x\nevent: job.created\ndata: {"padding":"${"x".repeat(360)}"}\n\n`);
const chunk = Buffer.concat([Buffer.from(`${frame.length.toString(16)}\r\n`), frame, Buffer.from("\r\n")]);

const responses: ServerResponse[] = [];
const server = createServer((_, res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.flushHeaders();
  responses.push(res);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const address = server.address();
if (address === null || typeof address === "string") throw new Error("no TCP address");

const clients: net.Socket[] = [];
const connectOne = () =>
  new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port: address.port }, () =>
      socket.write("GET / HTTP/1.1\r\nHost: bench\r\n\r\n"),
    );
    socket.once("data", () => {
      socket.pause();
      resolve();
    });
    socket.once("error", reject);
    clients.push(socket);
  });
for (let opened = 0; opened < RESPONSES; opened += CONNECT_CONCURRENCY)
  await Promise.all(Array.from({ length: Math.min(CONNECT_CONCURRENCY, RESPONSES - opened) }, connectOne));
while (responses.length < RESPONSES) await sleep(10);

const socketOf = (res: ServerResponse) => res.socket as net.Socket;
const ways: Record<string, () => void> = {
  "res.write(frame)": () => {
    for (const res of responses) res.write(frame);
  },
  "socket.write(chunk)": () => {
    for (const res of responses) socketOf(res).write(chunk);
  },
  "cork, socket.write(chunk), uncork next tick": () => {
    for (const res of responses) {
      socketOf(res).cork();
      socketOf(res).write(chunk);
    }
    process.nextTick(() => {
      for (const res of responses) socketOf(res).uncork();
    });
  },
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
for (let pass = 0; pass < 2; pass++) {
  for (const [name, write] of Object.entries(ways)) {
    const cpu: number[] = [];
    const system: number[] = [];
    const wall: number[] = [];
    for (let event = 0; event < EVENTS; event++) {
      const before = process.cpuUsage();
      const started = performance.now();
      write();
      // Written once Node has handed every write to the kernel: the next check phase.
      await new Promise((resolve) => setImmediate(resolve));
      const used = process.cpuUsage(before);
      cpu.push((used.user + used.system) / 1000);
      system.push(used.system / 1000);
      wall.push(performance.now() - started);
      await sleep(30);
    }
    if (pass === 1)
      process.stdout.write(
        `${name.padEnd(44)} CPU ${median(cpu).toFixed(1)} ms (system ${median(system).toFixed(1)}), wall ${median(wall).toFixed(1)} ms per event to ${RESPONSES} responses\n`,
      );
  }
}
for (const socket of clients) socket.destroy();
server.close();
process.exit(0);
