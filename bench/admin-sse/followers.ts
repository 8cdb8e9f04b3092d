/**
 * SSE followers on raw sockets in the bench process (a socket and a short tail string each):
 * each sends its own request headers (a session cookie, or a bearer token) and notes when each
 * event id arrives, on the one clock all followers share.
 */
import net from "node:net";
import { performance } from "node:perf_hooks";
import { type Spread, spread } from "../shared/stats.ts";

const CONNECT_CONCURRENCY = 100;
const HEADERS_END = "\r\n\r\n";

export interface Follower {
  /** Event id → arrival (performance.now() of this process). */
  arrivals: Map<string, number>;
  connected: boolean;
  /** Ended by the server after it was connected. */
  lost: boolean;
  error: string | undefined;
  socket: net.Socket;
}

function follow(host: string, port: number, path: string, headers: string, onSettled: () => void): Follower {
  const socket = net.connect({ host, port });
  const follower: Follower = { arrivals: new Map(), connected: false, lost: false, error: undefined, socket };
  let settled = false;
  let headersDone = false;
  let tail = "";
  const settle = (error?: string) => {
    if (settled) return;
    settled = true;
    follower.error = error;
    follower.connected = error === undefined;
    onSettled();
  };
  socket.once("connect", () =>
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n${headers}Accept: text/event-stream\r\n\r\n`,
    ),
  );
  socket.on("data", (chunk: Buffer) => {
    const at = performance.now();
    let text = tail + chunk.toString("latin1");
    if (!headersDone) {
      const end = text.indexOf(HEADERS_END);
      if (end < 0) {
        tail = text;
        return;
      }
      const statusLine = text.slice(0, text.indexOf("\r\n"));
      if (!/^HTTP\/1\.[01] 200 /.test(statusLine)) {
        settle(statusLine);
        socket.destroy();
        return;
      }
      headersDone = true;
      text = text.slice(end + HEADERS_END.length);
    }
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      if (text.startsWith("id: ", start)) follower.arrivals.set(text.slice(start + 4, newline).trimEnd(), at);
      else if (text.startsWith(": connected", start)) settle();
      start = newline + 1;
    }
    tail = text.slice(start);
  });
  socket.on("error", (err) => settle(err.message));
  socket.once("close", () => {
    if (follower.connected) follower.lost = true;
    settle("closed before : connected");
  });
  return follower;
}

/** Opens one follower per header set, a hundred at a time; resolves once every one is connected or failed. */
export function openFollowers(baseUrl: string, path: string, headerSets: string[]): Promise<Follower[]> {
  const { hostname, port } = new URL(baseUrl);
  const followers: Follower[] = [];
  let next = 0;
  let settled = 0;
  return new Promise((resolve) => {
    if (headerSets.length === 0) resolve(followers);
    const openNext = () => {
      const headers = headerSets[next++];
      if (headers === undefined) return;
      followers.push(
        follow(hostname, Number(port), path, headers, () => {
          settled++;
          if (settled === headerSets.length) resolve(followers);
          else openNext();
        }),
      );
    };
    for (let i = 0; i < Math.min(CONNECT_CONCURRENCY, headerSets.length); i++) openNext();
  });
}

export function closeFollowers(followers: Follower[]): void {
  for (const follower of followers) {
    follower.connected = false;
    follower.socket.destroy();
  }
}

export interface DelayRound {
  /** Sessions whose arrivals were read and compared. */
  readers: number;
  /** Events the reference delivered (or the bench asked for). */
  events: number;
  /** Readers that received every one of them. */
  receivedAll: number;
  /** Reader arrival minus the reference time, per (event, reader). */
  added: Spread;
}

/** Each reader's arrival of each event against the event's reference time (id → time). */
export function compareArrivals(readers: Follower[], reference: [string, number][]): DelayRound {
  const added: number[] = [];
  let receivedAll = 0;
  for (const reader of readers) {
    let all = reference.length > 0;
    for (const [id, at] of reference) {
      const arrived = reader.arrivals.get(id);
      if (arrived === undefined) all = false;
      else added.push(arrived - at);
    }
    if (all) receivedAll++;
  }
  return { readers: readers.length, events: reference.length, receivedAll, added: spread(added) };
}
