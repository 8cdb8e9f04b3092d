/**
 * SSE fan-out: many concurrent subscribers on GET /api/v1/operations/events of one Manager
 * on Node. Measures the Manager's memory per subscriber and, for jobs submitted while all
 * listen, the delay from each event's commit to its arrival at every subscriber, hop by hop.
 *
 * Subscribers live in child processes (bench/sse/subscribers.ts) on raw sockets, a few
 * thousand per process, so the client side stays cheap and within open-file limits. They
 * share the Manager's cores, so each level has two rounds: every subscriber read, then a
 * spread sample read (the server still writes to all; the client's CPU no longer delays the
 * readers). Then the floor: a bare node:http server writing the same bytes to as many sockets.
 */
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { streams } from "@tjm/protocol";
import type { BenchContext } from "../scenario.ts";
import { JOBS_PATH } from "../shared/api.ts";
import { HttpClient } from "../shared/load.ts";
import { createProject, freshManagerSchema, startManager } from "../shared/manager-process.ts";
import { findProcessTree, raiseOpenFilesLimit, rssBytes } from "../shared/proc.ts";
import { median, spread } from "../shared/stats.ts";
import { compareArrivals } from "./arrivals.ts";
import { measureFloor } from "./floor.ts";
import { deliver, type SseRound } from "./round.ts";
import { SPARE_FILES, SubscriberLevel, type SubscriberProcess, withTimeout } from "./subscriber-processes.ts";

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
  /** Medians over the level's events from commit to the relay's transaction start (outbox.published_at). */
  relayP50Ms: number;
  /** … to JetStream storing it (the stored message's time). */
  storedP50Ms: number;
  /** … to the Manager's fan-out starting (its "event fanned out" debug line). */
  fanOutStartP50Ms: number;
  /** Every subscriber read, then a sample. */
  rounds: SseRound[];
  /** The bare node:http server's rounds at the same count. */
  floor: SseRound[] | undefined;
  /** Subscriptions the server closed while they were being measured. */
  lost: number;
}

export interface SseResult {
  levels: SseLevelResult[];
  processes: number[];
  sampledReaders: number;
}

/** Time for the Manager to release what closed subscriptions held, before the RSS is read. */
const SETTLE_MS = 3000;
const WARM_UP_SUBSCRIBERS = 100;
const CONNECT_TIMEOUT_MS = 120_000;

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

/**
 * SIGTERM to the Manager's node process alone, waiting until it is gone: it writes its CPU
 * profile as it exits.
 */
async function stopAlone(pid: number): Promise<void> {
  process.kill(pid, "SIGTERM");
  while (existsSync(`/proc/${pid}`)) await sleep(100);
}

/** The Manager's "event fanned out" debug lines: when each event's fan-out started, and its writes took. */
function fanOutsLogged(output: string): Map<string, { startedAtMs: number; writtenMs: number }> {
  const fanOuts = new Map<string, { startedAtMs: number; writtenMs: number }>();
  for (const line of output.split("\n")) {
    if (!line.includes('"event fanned out"')) continue;
    try {
      const entry = JSON.parse(line) as { eventId: string; startedAtMs: number; writtenMs: number };
      fanOuts.set(entry.eventId, { startedAtMs: entry.startedAtMs, writtenMs: entry.writtenMs });
    } catch {
      // another line mentioning it
    }
  }
  return fanOuts;
}

export async function benchSse(context: BenchContext): Promise<SseResult> {
  const settings = context.settings.sse;
  const { schema, env } = await freshManagerSchema(context, "sse");
  const { projectId } = await createProject(env, "bench", "bench");
  // Debug: the hub's "event fanned out" lines time the fan-out. NODE_OPTIONS reaches npm
  // too; the Manager's profile is the one named by its pid.
  const managerSettings: Record<string, string> = { LOG_LEVEL: "debug" };
  if (settings.cpuProfileDir)
    managerSettings.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${settings.cpuProfileDir}`;
  const manager = await startManager("node", env, context.cleanup, managerSettings);
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
  const managerStream = { baseUrl: manager.baseUrl, path: "/api/v1/operations/events", token: context.token };

  // Warm-up: the first subscriptions compile code and fetch the issuer's keys; that memory
  // is not per subscriber, so it is spent before the first baseline.
  const warmUp = await withTimeout(
    SubscriberLevel.connect(managerStream, WARM_UP_SUBSCRIBERS, settings.perProcess, children),
    CONNECT_TIMEOUT_MS,
    "the warm-up subscribers were not connected",
  );
  await warmUp.close();

  const levels: SseLevelResult[] = [];
  for (const subscribers of settings.subscribers) {
    await sleep(SETTLE_MS);
    const rssBaselineBytes = rssBytes(managerPid);
    const startedAt = Date.now();
    const level = await SubscriberLevel.connect(managerStream, subscribers, settings.perProcess, children);
    context.log(
      `sse: ${level.connected} of ${subscribers} subscribers connected in ${level.connectSeconds.toFixed(1)} s over ${level.processes.length} processes`,
    );
    await sleep(1000);
    const rssConnectedBytes = rssBytes(managerPid);
    const eventConsumers = await countEventConsumers(context, nc, schema, startedAt);

    // Jobs at a modest rate; each commits one job.created event. A new client per level: a
    // keep-alive socket idle since the last level may be closing on the server's side.
    const client = new HttpClient(manager.baseUrl, context.token, 1);
    context.cleanup.defer("close the SSE bench's HTTP client", async () => client.close());
    const submit = async () => {
      await client.expect(201, "POST", JOBS_PATH, body).catch((err: unknown) => {
        const output = manager.output().trim().split("\n").slice(-5).join("\n");
        throw new Error(
          `${err instanceof Error ? err.message : String(err)}; the Manager's last output:\n${output}`,
        );
      });
    };
    const rounds: { sampled: boolean; after: string; until: string; cpu: SseRound["cpu"] }[] = [];
    for (const sampled of [false, true]) {
      if (sampled) level.sample(settings.sampledReaders);
      const [before] = await context.admin<{ id: string }[]>`
        select coalesce(max(id), 0)::text as id from ${outbox}`;
      const cpu = await deliver(level, managerPid, settings.jobs, settings.jobsPerSecond, submit);
      const [until] = await context.admin<{ id: string }[]>`
        select coalesce(max(id), 0)::text as id from ${outbox}`;
      rounds.push({ sampled, after: before?.id ?? "0", until: until?.id ?? "0", cpu });
    }
    const rssAfterEventsBytes = rssBytes(managerPid);
    client.close();

    // The pipeline's first steps: the relay's transaction start (published_at) and JetStream.
    const first = rounds[0]?.after ?? "0";
    const relayed = await context.admin<
      { outboxId: string; id: string; createdMs: number; publishedMs: number | null }[]
    >`
      select id::text as "outboxId", message_id::text as id,
             (extract(epoch from created_at) * 1000)::float8 as "createdMs",
             (extract(epoch from published_at) * 1000)::float8 as "publishedMs"
      from ${outbox} where id > ${first}::bigint order by id`;
    const stored = await storedAt(context, nc, schema, new Set(relayed.map((row) => row.id)));
    const fanOuts = fanOutsLogged(manager.output());
    const results = await level.close();
    const arrivals = results.flatMap((result) => result.subscribers);
    const measured = rounds.map(({ sampled, after, until, cpu }): SseRound => {
      const events = relayed.filter(
        (row) => BigInt(row.outboxId) > BigInt(after) && BigInt(row.outboxId) <= BigInt(until),
      );
      const committed = new Map(events.map((row) => [row.id, row.createdMs]));
      const fanOutStarted = new Map(
        events.flatMap((row) => {
          const fanOut = fanOuts.get(row.id);
          return fanOut ? [[row.id, fanOut.startedAtMs] as const] : [];
        }),
      );
      return {
        sampled,
        arrivals: compareArrivals(arrivals, committed, sampled),
        fromFanOut: compareArrivals(arrivals, fanOutStarted, sampled),
        written: spread(events.map((row) => fanOuts.get(row.id)?.writtenMs ?? Number.NaN)),
        cpu,
      };
    });
    await sleep(SETTLE_MS);
    const rssDisconnectedBytes = rssBytes(managerPid);
    const floor = await measureFloor(context, subscribers, children);
    const result: SseLevelResult = {
      subscribers,
      connected: level.connected,
      failed: level.failed,
      firstError: level.firstError,
      connectSeconds: level.connectSeconds,
      eventConsumers,
      rssBaselineBytes,
      rssConnectedBytes,
      rssAfterEventsBytes,
      rssDisconnectedBytes,
      bytesPerSubscriber:
        level.connected > 0 ? (rssConnectedBytes - rssBaselineBytes) / level.connected : Number.NaN,
      relayP50Ms: median(
        relayed.flatMap((row) => (row.publishedMs === null ? [] : [row.publishedMs - row.createdMs])),
      ),
      storedP50Ms: median(
        relayed.flatMap((row) => {
          const at = stored.get(row.id);
          return at === undefined ? [] : [at - row.createdMs];
        }),
      ),
      fanOutStartP50Ms: median(
        relayed.flatMap((row) => {
          const fanOut = fanOuts.get(row.id);
          return fanOut ? [fanOut.startedAtMs - row.createdMs] : [];
        }),
      ),
      rounds: measured,
      floor,
      lost: results.reduce((sum, result) => sum + result.lost, 0),
    };
    const [all, sample] = measured;
    context.log(
      `sse x${subscribers}: ${(result.bytesPerSubscriber / 1024).toFixed(1)} KiB/subscriber, p99 ${all?.arrivals.delay.p99.toFixed(1)} ms (all read), ${sample?.arrivals.delay.p99.toFixed(1)} ms (sample read); floor p99 ${floor[0]?.arrivals.delay.p99.toFixed(1)} / ${floor[1]?.arrivals.delay.p99.toFixed(1)} ms`,
    );
    levels.push(result);
  }
  if (settings.cpuProfileDir) await stopAlone(managerPid);
  await manager.stop();
  return {
    levels,
    processes: settings.subscribers.map((n) => Math.ceil(n / settings.perProcess)),
    sampledReaders: settings.sampledReaders,
  };
}
