/**
 * The SSE bench's subscriber processes (subscribers.ts), a few thousand sockets each, and one
 * level of them: connected together, asked together, closed together.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { REPOSITORY_ROOT } from "../shared/manager-process.ts";
import { openFilesLimit } from "../shared/proc.ts";
import type { ConnectedMessage, ResultMessage, StatusMessage } from "./subscribers.ts";

const CHILD_SCRIPT = fileURLToPath(new URL("./subscribers.ts", import.meta.url));
const CONNECT_TIMEOUT_MS = 120_000;
/** Open files a process needs beside its sockets. */
export const SPARE_FILES = 256;

export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

type ChildMessage = ConnectedMessage | StatusMessage | ResultMessage;

/** One subscriber process, driven over its stdin and stdout. */
export class SubscriberProcess {
  private readonly waiting = new Map<ChildMessage["type"], (message: ChildMessage) => void>();
  private stderr = "";
  readonly ready: Promise<ConnectedMessage>;
  private readonly exited: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    readonly count: number,
  ) {
    child.stderr?.on("data", (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-2000);
    });
    this.exited = new Promise((resolve) => {
      // "close", not "exit": it comes after the last output line was read.
      child.once("close", () => resolve());
      child.once("error", (err) => {
        this.stderr += err.message;
        resolve();
      });
    });
    this.ready = this.next("connected") as Promise<ConnectedMessage>;
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      let message: ChildMessage;
      try {
        message = JSON.parse(line) as ChildMessage;
      } catch {
        this.stderr += `unreadable output line: ${line.slice(0, 200)}`;
        return;
      }
      const resolve = this.waiting.get(message.type);
      this.waiting.delete(message.type);
      resolve?.(message);
    });
  }

  private next(type: ChildMessage["type"]): Promise<ChildMessage> {
    return new Promise((resolve, reject) => {
      this.waiting.set(type, resolve);
      void this.exited.then(() => {
        if (this.waiting.has(type))
          reject(new Error(`subscriber process exited (${this.child.exitCode}): ${this.stderr.trim()}`));
      });
    });
  }

  /** From now on only each `every`-th subscription of this process is read. */
  sample(every: number): void {
    this.child.stdin?.write(`sample ${every}\n`);
  }

  async status(): Promise<StatusMessage> {
    const reply = this.next("status");
    this.child.stdin?.write("status\n");
    return (await reply) as StatusMessage;
  }

  async close(): Promise<ResultMessage> {
    const reply = this.next("result");
    this.child.stdin?.write("close\n");
    const result = (await reply) as ResultMessage;
    await this.exited;
    return result;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

/** Where subscribers connect: the Manager's event stream, or the bare server's (any path). */
export interface SubscribeTo {
  baseUrl: string;
  path: string;
  token: string;
}

export function startSubscribers(
  to: SubscribeTo,
  count: number,
  children: SubscriberProcess[],
): SubscriberProcess {
  const { hostname, port } = new URL(to.baseUrl);
  const env = {
    ...process.env,
    SSE_HOST: hostname,
    SSE_PORT: port,
    SSE_PATH: to.path,
    SSE_TOKEN: to.token,
    SSE_COUNT: String(count),
  };
  const args = ["--import", "tsx", CHILD_SCRIPT];
  const wanted = count + SPARE_FILES;
  // A child inherits this process's limit; raise it in a shell when that is too low.
  const child =
    openFilesLimit("self").soft >= wanted
      ? spawn(process.execPath, args, { cwd: REPOSITORY_ROOT, env, stdio: "pipe" })
      : spawn("bash", ["-c", `ulimit -n ${wanted} && exec "$0" "$@"`, process.execPath, ...args], {
          cwd: REPOSITORY_ROOT,
          env,
          stdio: "pipe",
        });
  const subscribers = new SubscriberProcess(child, count);
  children.push(subscribers);
  return subscribers;
}

/** `count` subscribers split over processes of at most `perProcess` sockets. */
export class SubscriberLevel {
  private constructor(
    readonly processes: SubscriberProcess[],
    readonly connected: number,
    readonly failed: number,
    readonly firstError: string | undefined,
    readonly connectSeconds: number,
  ) {}

  static async connect(
    to: SubscribeTo,
    count: number,
    perProcess: number,
    children: SubscriberProcess[],
  ): Promise<SubscriberLevel> {
    const started = performance.now();
    const processes = Math.ceil(count / perProcess);
    const level = Array.from({ length: processes }, (_, index) =>
      startSubscribers(to, Math.floor(count / processes) + (index < count % processes ? 1 : 0), children),
    );
    const ready = await withTimeout(
      Promise.all(level.map((child) => child.ready)),
      CONNECT_TIMEOUT_MS,
      `${count} subscribers were not connected`,
    );
    return new SubscriberLevel(
      level,
      ready.reduce((sum, message) => sum + message.connected, 0),
      ready.reduce((sum, message) => sum + message.failed, 0),
      ready.find((message) => message.firstError)?.firstError,
      (performance.now() - started) / 1000,
    );
  }

  get pids(): number[] {
    return this.processes.map((child) => child.pid);
  }

  /** Event receipts so far over every subscriber, and the subscribers still read. */
  async status(): Promise<{ received: number; readers: number }> {
    const statuses = await Promise.all(this.processes.map((child) => child.status()));
    return {
      received: statuses.reduce((sum, status) => sum + status.received, 0),
      readers: statuses.reduce((sum, status) => sum + status.readers, 0),
    };
  }

  /** Reads about `readers` subscribers from now on, spread evenly over every process. */
  sample(readers: number): void {
    for (const child of this.processes) child.sample(Math.max(1, Math.floor(this.connected / readers)));
  }

  /** Until `received` receipts in all, or the deadline (performance.now()). */
  async waitForReceipts(received: number, deadline: number): Promise<void> {
    while ((await this.status()).received < received && performance.now() < deadline) await sleep(200);
  }

  close(): Promise<ResultMessage[]> {
    return Promise.all(this.processes.map((child) => child.close()));
  }
}
