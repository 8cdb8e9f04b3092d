/**
 * SSE fan-out: many concurrent subscribers on GET /api/v1/operations/events of one Manager
 * on Node. Measures the Manager's memory per subscriber and, for jobs submitted while all
 * listen, the delay from each event's commit to its arrival at every subscriber.
 *
 * Subscribers live in child processes (bench/sse/subscribers.ts) on raw sockets, a few
 * thousand per process, so the client side stays cheap and within open-file limits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { streams } from "@tjm/protocol";
import type { BenchContext } from "../scenario.ts";
import { JOBS_PATH } from "../shared/api.ts";
import { HttpClient } from "../shared/load.ts";
import {
  createProject,
  freshManagerSchema,
  REPOSITORY_ROOT,
  startManager,
} from "../shared/manager-process.ts";
import {
  cpuSeconds,
  findProcessTree,
  openFilesLimit,
  raiseOpenFilesLimit,
  rssBytes,
} from "../shared/proc.ts";
import { percentile } from "../shared/stats.ts";
import type { ConnectedMessage, ResultMessage, StatusMessage } from "./subscribers.ts";

export interface SseLevelResult {
  subscribers: number;
  connected: number;
  failed: number;
  firstError: string | undefined;
  connectSeconds: number;
  /** Consumers on the prefix's events stream created for this level (the hub shares one). */
  eventConsumers: number | undefined;
  rssBaselineBytes: number;
  rssConnectedBytes: number;
  rssAfterEventsBytes: number;
  rssDisconnectedBytes: number;
  /** (connected − baseline) / connected subscribers. */
  bytesPerSubscriber: number;
  events: number;
  /** Connected subscribers that received every event. */
  receivedAll: number;
  /** (event, subscriber) pairs delivered out of events × connected. */
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Median over events from commit to the relay's transaction start (outbox.published_at). */
  relayP50Ms: number;
  /** Median over events from commit to JetStream storing it (the stored message's time). */
  storedP50Ms: number;
  /** Median over events of the earliest arrival: commit to the hub's first write, roughly. */
  firstP50Ms: number;
  /** Median and max over events of last minus first arrival: the fan-out itself. */
  fanOutP50Ms: number;
  fanOutMaxMs: number;
  /** From the first submission until every subscriber had every event (or the timeout). */
  deliverySeconds: number;
  /** CPU seconds per second over that time: the Manager's node process, and all subscriber processes. */
  managerCpuShare: number;
  subscribersCpuShare: number;
  /** Subscriptions the server closed while they were being measured. */
  lost: number;
}

export interface SseResult {
  levels: SseLevelResult[];
  processes: number[];
}

const CHILD_SCRIPT = fileURLToPath(new URL("./subscribers.ts", import.meta.url));
const CONNECT_TIMEOUT_MS = 120_000;
const DELIVERY_TIMEOUT_MS = 30_000;
/** Time for the Manager to release what closed subscriptions held, before the RSS is read. */
const SETTLE_MS = 3000;
/** Open files a process needs beside its sockets. */
const SPARE_FILES = 256;
const WARM_UP_SUBSCRIBERS = 100;

async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
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
class SubscriberProcess {
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

function startSubscribers(
  context: BenchContext,
  baseUrl: string,
  count: number,
  children: SubscriberProcess[],
): SubscriberProcess {
  const { hostname, port } = new URL(baseUrl);
  const env = {
    ...process.env,
    SSE_HOST: hostname,
    SSE_PORT: port,
    SSE_TOKEN: context.token,
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

/**
 * Consumers on the prefix's events stream created since `since`: the hub's one, plus any it
 * had to re-create. Consumers of earlier levels linger until their inactivity threshold.
 */
async function countEventConsumers(
  context: BenchContext,
  nc: NatsConnection,
  prefix: string,
  since: number,
): Promise<number | undefined> {
  try {
    const jsm = await jetstreamManager(nc);
    let consumers = 0;
    for await (const consumer of jsm.consumers.list(streams(prefix).events.name))
      if (Date.parse(consumer.created) >= since) consumers++;
    return consumers;
  } catch (err) {
    context.log(
      `sse: cannot count the events stream's consumers: ${err instanceof Error ? err.message : err}`,
    );
    return undefined;
  }
}

/** When JetStream stored each event (by its Nats-Msg-Id, the outbox row's message_id), in ms. */
async function storedAt(
  context: BenchContext,
  nc: NatsConnection,
  prefix: string,
  ids: Set<string>,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  try {
    const jsm = await jetstreamManager(nc);
    const name = streams(prefix).events.name;
    const { state } = await jsm.streams.info(name);
    for (let seq = state.last_seq; seq >= state.first_seq && found.size < ids.size && seq > 0; seq--) {
      const message = await jsm.streams.getMessage(name, { seq });
      const id = message?.header.get("Nats-Msg-Id");
      if (message && id && ids.has(id)) found.set(id, message.time.getTime());
    }
  } catch (err) {
    context.log(`sse: cannot read the events stream: ${err instanceof Error ? err.message : err}`);
  }
  return found;
}

const medianOf = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

export async function benchSse(context: BenchContext): Promise<SseResult> {
  const settings = context.settings.sse;
  const { schema, env } = await freshManagerSchema(context, "sse");
  const { projectId } = await createProject(env, "bench", "bench");
  const manager = await startManager("node", env, context.cleanup);
  const tree = findProcessTree("DATABASE_SCHEMA", schema);
  const managerPid = tree.manager;
  const limit = raiseOpenFilesLimit(managerPid, Math.max(...settings.subscribers) + SPARE_FILES, context.log);
  context.log(`sse: Manager pid ${managerPid}, open-files limit ${limit}`);

  const nc = await connect({ servers: context.natsUrl });
  context.cleanup.defer("close the SSE bench's NATS connection", () => nc.close());
  const children: SubscriberProcess[] = [];
  context.cleanup.defer("stop the SSE subscriber processes", async () => {
    for (const child of children) child.kill();
  });
  const body = Buffer.from(JSON.stringify(sampleSubmission(projectId)));
  const outbox = context.admin(`${schema}.outbox`);

  // Warm-up: the first subscriptions compile code and fetch the issuer's keys; that memory
  // is not per subscriber, so it is spent before the first baseline.
  const warmUp = startSubscribers(context, manager.baseUrl, WARM_UP_SUBSCRIBERS, children);
  await withTimeout(warmUp.ready, CONNECT_TIMEOUT_MS, "the warm-up subscribers were not connected");
  await warmUp.close();

  const levels: SseLevelResult[] = [];
  for (const subscribers of settings.subscribers) {
    await sleep(SETTLE_MS);
    const rssBaselineBytes = rssBytes(managerPid);

    // Connect everyone, split over processes of at most perProcess sockets.
    const processes = Math.ceil(subscribers / settings.perProcess);
    const startedAt = Date.now();
    const started = performance.now();
    const level = Array.from({ length: processes }, (_, index) =>
      startSubscribers(
        context,
        manager.baseUrl,
        Math.floor(subscribers / processes) + (index < subscribers % processes ? 1 : 0),
        children,
      ),
    );
    const ready = await withTimeout(
      Promise.all(level.map((child) => child.ready)),
      CONNECT_TIMEOUT_MS,
      `${subscribers} subscribers were not connected`,
    );
    const connectSeconds = (performance.now() - started) / 1000;
    const connected = ready.reduce((sum, message) => sum + message.connected, 0);
    const failed = ready.reduce((sum, message) => sum + message.failed, 0);
    const firstError = ready.find((message) => message.firstError)?.firstError;
    context.log(
      `sse: ${connected} of ${subscribers} subscribers connected in ${connectSeconds.toFixed(1)} s over ${processes} processes`,
    );
    await sleep(1000);
    const rssConnectedBytes = rssBytes(managerPid);
    const eventConsumers = await countEventConsumers(context, nc, schema, startedAt);

    // Jobs at a modest rate; each commits one job.created event. A new client per level: a
    // keep-alive socket idle since the last level may be closing on the server's side.
    const client = new HttpClient(manager.baseUrl, context.token, 1);
    context.cleanup.defer("close the SSE bench's HTTP client", async () => client.close());
    const [before] = await context.admin<{ id: string }[]>`
      select coalesce(max(id), 0)::text as id from ${outbox}`;
    const submitStarted = performance.now();
    const clientPids = level.map((child) => child.pid);
    const managerCpuBefore = cpuSeconds([managerPid]);
    const subscribersCpuBefore = cpuSeconds(clientPids);
    for (let job = 0; job < settings.jobs; job++) {
      const due = submitStarted + (job * 1000) / settings.jobsPerSecond;
      if (due > performance.now()) await sleep(due - performance.now());
      await client.expect(201, "POST", JOBS_PATH, body).catch((err: unknown) => {
        const output = manager.output().trim().split("\n").slice(-5).join("\n");
        throw new Error(
          `${err instanceof Error ? err.message : String(err)}; the Manager's last output:\n${output}`,
        );
      });
    }
    const events = await context.admin<{ id: string; atMs: number }[]>`
      select message_id::text as id, (extract(epoch from created_at) * 1000)::float8 as "atMs"
      from ${outbox} where id > ${before?.id ?? "0"}::bigint order by id`;
    // Until every subscriber has every event, or the timeout.
    const expected = events.length * connected;
    const deliveryDeadline = performance.now() + DELIVERY_TIMEOUT_MS;
    for (;;) {
      const statuses = await Promise.all(level.map((child) => child.status()));
      const received = statuses.reduce((sum, status) => sum + status.received, 0);
      if (received >= expected || performance.now() > deliveryDeadline) break;
      await sleep(200);
    }
    const deliverySeconds = (performance.now() - submitStarted) / 1000;
    const managerCpuShare = (cpuSeconds([managerPid]) - managerCpuBefore) / deliverySeconds;
    const subscribersCpuShare = (cpuSeconds(clientPids) - subscribersCpuBefore) / deliverySeconds;
    const rssAfterEventsBytes = rssBytes(managerPid);
    client.close();

    // The pipeline's first steps: the relay's transaction start (published_at) and JetStream.
    const relayed = await context.admin<{ id: string; createdMs: number; publishedMs: number | null }[]>`
      select message_id::text as id, (extract(epoch from created_at) * 1000)::float8 as "createdMs",
             (extract(epoch from published_at) * 1000)::float8 as "publishedMs"
      from ${outbox} where id > ${before?.id ?? "0"}::bigint`;
    const stored = await storedAt(context, nc, schema, new Set(relayed.map((row) => row.id)));
    const relayP50Ms = medianOf(
      relayed.flatMap((row) => (row.publishedMs === null ? [] : [row.publishedMs - row.createdMs])),
    );
    const storedP50Ms = medianOf(
      relayed.flatMap((row) => {
        const at = stored.get(row.id);
        return at === undefined ? [] : [at - row.createdMs];
      }),
    );

    const results = await Promise.all(level.map((child) => child.close()));
    const committedAt = new Map(events.map((event) => [event.id, event.atMs]));
    const delays: number[] = [];
    // Per event: the first arrival (commit, relay, NATS and the hub) and the last.
    const spreads = new Map<string, { first: number; last: number }>();
    let receivedAll = 0;
    let lost = 0;
    for (const result of results) {
      lost += result.lost;
      for (const subscriber of result.subscribers) {
        const seen = new Set<string>();
        subscriber.ids.forEach((id, index) => {
          const at = committedAt.get(id);
          if (at === undefined || seen.has(id)) return;
          seen.add(id);
          const delay = (subscriber.atMs[index] as number) - at;
          delays.push(delay);
          const spread = spreads.get(id);
          if (spread) {
            spread.first = Math.min(spread.first, delay);
            spread.last = Math.max(spread.last, delay);
          } else spreads.set(id, { first: delay, last: delay });
        });
        if (seen.size === events.length && events.length > 0) receivedAll++;
      }
    }
    delays.sort((a, b) => a - b);
    const firsts = [...spreads.values()].map((spread) => spread.first).sort((a, b) => a - b);
    const fanOuts = [...spreads.values()].map((spread) => spread.last - spread.first).sort((a, b) => a - b);
    await sleep(SETTLE_MS);
    const rssDisconnectedBytes = rssBytes(managerPid);
    const result: SseLevelResult = {
      subscribers,
      connected,
      failed,
      firstError,
      connectSeconds,
      eventConsumers,
      rssBaselineBytes,
      rssConnectedBytes,
      rssAfterEventsBytes,
      rssDisconnectedBytes,
      bytesPerSubscriber: connected > 0 ? (rssConnectedBytes - rssBaselineBytes) / connected : Number.NaN,
      events: events.length,
      receivedAll,
      deliveries: delays.length,
      p50Ms: percentile(delays, 0.5),
      p99Ms: percentile(delays, 0.99),
      maxMs: delays.at(-1) ?? Number.NaN,
      relayP50Ms,
      storedP50Ms,
      firstP50Ms: percentile(firsts, 0.5),
      fanOutP50Ms: percentile(fanOuts, 0.5),
      fanOutMaxMs: fanOuts.at(-1) ?? Number.NaN,
      deliverySeconds,
      managerCpuShare,
      subscribersCpuShare,
      lost,
    };
    context.log(
      `sse x${subscribers}: ${(result.bytesPerSubscriber / 1024).toFixed(1)} KiB/subscriber, p99 ${result.p99Ms.toFixed(1)} ms, ${receivedAll} got all ${events.length} events`,
    );
    levels.push(result);
  }
  await manager.stop();
  return { levels, processes: settings.subscribers.map((n) => Math.ceil(n / settings.perProcess)) };
}
