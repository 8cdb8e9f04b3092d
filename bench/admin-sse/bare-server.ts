/**
 * The floor under the Admin's relay: a bare node:http process holding SSE responses and
 * writing each event to every one of them with `res.write`, as the relay does, and nothing
 * else (no upstream, no sessions, no checks). Started by floor.ts; it prints `port <n>`, then
 * for each line `write <id>` on its standard input writes one frame of the relay's size to
 * every response and prints `written <id> <ms>`, the time until Node has handed every write
 * to the kernel (the next turn of the event loop).
 */
import { createServer, type ServerResponse } from "node:http";
import { createInterface } from "node:readline";

const responses: ServerResponse[] = [];
const server = createServer((_, res) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(": connected\n\n");
  responses.push(res);
  res.on("close", () => responses.splice(responses.indexOf(res), 1));
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  process.stdout.write(`port ${address.port}\n`);
});

/** A job.created frame's size as the Manager writes it (about 450 bytes). */
const PADDING = "x".repeat(360);

createInterface({ input: process.stdin }).on("line", (line) => {
  const [command, id] = line.split(" ");
  if (command !== "write" || id === undefined) return;
  const frame = Buffer.from(`id: ${id}\nevent: job.created\ndata: {"padding":"${PADDING}"}\n\n`);
  const started = performance.now();
  for (const res of responses) res.write(frame);
  setImmediate(() => process.stdout.write(`written ${id} ${(performance.now() - started).toFixed(3)}\n`));
});
process.stdin.on("end", () => process.exit(0));
