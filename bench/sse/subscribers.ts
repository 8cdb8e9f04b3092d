/**
 * A child process of the SSE bench: holds SSE_COUNT subscriptions to the Manager's event
 * stream on raw sockets (no fetch, no http.Agent: a socket and a short tail string each) and
 * notes when each event id arrives at each subscriber.
 *
 * Talks to the bench over stdio, one JSON object a line. Out: {"type":"connected",...} once
 * every subscription got its ": connected" comment (or failed); {"type":"status",...} per
 * "status" line in; {"type":"result",...} after a "close" line in, which also ends the process.
 * A "sample <n>" line in stops reading every subscription but each n-th: the server still
 * writes to all, their bytes wait in the kernel, and this process's CPU no longer delays the
 * readers left (how the Admin console's bench separates client cost from server cost).
 */
import net from "node:net";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";

export interface ConnectedMessage {
  type: "connected";
  connected: number;
  failed: number;
  firstError: string | undefined;
  seconds: number;
}

export interface StatusMessage {
  type: "status";
  /** Event receipts so far over all subscribers. */
  received: number;
  /** Subscriptions closed by the server or by an error after connecting. */
  lost: number;
  /** Connected subscriptions still read (all until a "sample" line). */
  readers: number;
}

export interface ResultMessage {
  type: "result";
  /**
   * Per subscriber: the event ids in arrival order, their wall-clock arrival times (ms), and
   * whether it was still read at the end (one of the sample).
   */
  subscribers: { ids: string[]; atMs: number[]; reader: boolean }[];
  lost: number;
}

const CONNECT_CONCURRENCY = 200;
const HEADERS_END = "\r\n\r\n";

interface Subscriber {
  socket: net.Socket;
  headersDone: boolean;
  /** Got ": connected" (or failed): counted once either way. */
  settled: boolean;
  connected: boolean;
  reader: boolean;
  tail: string;
  ids: string[];
  atMs: number[];
}

const wallNow = () => performance.timeOrigin + performance.now();

function send(message: ConnectedMessage | StatusMessage | ResultMessage, then?: () => void): void {
  process.stdout.write(`${JSON.stringify(message)}\n`, then);
}

function main(): void {
  const host = process.env.SSE_HOST ?? "127.0.0.1";
  const port = Number(process.env.SSE_PORT);
  const path = process.env.SSE_PATH ?? "/api/v1/operations/events";
  const count = Number(process.env.SSE_COUNT);
  const request = Buffer.from(
    `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${process.env.SSE_TOKEN}\r\n` +
      `Accept: text/event-stream\r\n\r\n`,
    "latin1",
  );

  const subscribers: Subscriber[] = [];
  let opened = 0;
  let settled = 0;
  let failed = 0;
  let lost = 0;
  let firstError: string | undefined;
  const started = performance.now();
  let reportedConnected = false;

  let closing = false;

  const settle = (subscriber: Subscriber, error?: string) => {
    if (subscriber.settled) return;
    subscriber.settled = true;
    settled++;
    if (error !== undefined) {
      failed++;
      firstError ??= error;
      subscriber.socket.destroy();
    } else subscriber.connected = true;
    if (opened < count) open();
    if (settled === count && !reportedConnected) {
      reportedConnected = true;
      send({
        type: "connected",
        connected: count - failed,
        failed,
        firstError,
        seconds: (performance.now() - started) / 1000,
      });
    }
  };

  const onData = (subscriber: Subscriber, chunk: Buffer) => {
    const at = wallNow();
    let text = subscriber.tail + chunk.toString("latin1");
    if (!subscriber.headersDone) {
      const end = text.indexOf(HEADERS_END);
      if (end < 0) {
        subscriber.tail = text;
        return;
      }
      const statusLine = text.slice(0, text.indexOf("\r\n"));
      if (!/^HTTP\/1\.[01] 200 /.test(statusLine)) {
        settle(subscriber, `${statusLine}: ${text.slice(end + HEADERS_END.length, end + 300)}`);
        return;
      }
      subscriber.headersDone = true;
      text = text.slice(end + HEADERS_END.length);
    }
    // The body is chunked; an event is written as one chunk, so only a line split across
    // reads needs care: the unfinished last line waits for the next read.
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      if (text.startsWith("id: ", start)) {
        subscriber.ids.push(text.slice(start + 4, newline).trimEnd());
        subscriber.atMs.push(at);
      } else if (!subscriber.settled && text.startsWith(": connected", start)) settle(subscriber);
      start = newline + 1;
    }
    subscriber.tail = text.slice(start);
  };

  const open = () => {
    opened++;
    const socket = net.connect({ host, port });
    const subscriber: Subscriber = {
      socket,
      headersDone: false,
      settled: false,
      connected: false,
      reader: true,
      tail: "",
      ids: [],
      atMs: [],
    };
    subscribers.push(subscriber);
    socket.once("connect", () => socket.write(request));
    socket.on("data", (chunk: Buffer) => onData(subscriber, chunk));
    socket.on("error", (err) => settle(subscriber, err.message));
    socket.once("close", () => {
      if (subscriber.connected && !closing) lost++;
      settle(subscriber, "closed before : connected");
    });
  };

  for (let i = 0; i < Math.min(CONNECT_CONCURRENCY, count); i++) open();
  if (count === 0) send({ type: "connected", connected: 0, failed: 0, firstError: undefined, seconds: 0 });

  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    const [command, argument] = line.split(" ");
    if (command === "status") {
      send({
        type: "status",
        received: subscribers.reduce((sum, s) => sum + s.ids.length, 0),
        lost,
        readers: subscribers.filter((s) => s.connected && s.reader).length,
      });
    } else if (command === "sample") {
      const every = Number(argument);
      subscribers.forEach((subscriber, index) => {
        if (index % every === 0) return;
        subscriber.reader = false;
        subscriber.socket.pause();
      });
    } else if (command === "close") {
      const result: ResultMessage = {
        type: "result",
        lost,
        subscribers: subscribers.map(({ ids, atMs, reader }) => ({
          ids,
          atMs: atMs.map((t) => Math.round(t * 100) / 100),
          reader,
        })),
      };
      closing = true;
      for (const subscriber of subscribers) subscriber.socket.destroy();
      lines.close();
      send(result, () => process.exit(0));
    }
  });
}

main();
