/**
 * Each Worker's durable consumer on <PREFIX>_COMMANDS, filtered to its own commands subject.
 * The Manager creates it at registration (a Worker's credentials cannot create consumers) and
 * deletes it when the Worker is disabled, which cuts the Worker off from its commands at once,
 * before its user JWT expires. When the stream itself is replaced (deleted under a running
 * Manager, or lost with a NATS store), every consumer on it goes with it: the keeper below
 * creates them again.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  jetstreamManager,
  type StreamInfo,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@tjm/platform";
import { streams, subjects, workerConsumerName } from "@tjm/protocol";
import { ensurePrefixStreams } from "../outbox/index.ts";
import type { Broker } from "../platform/broker.ts";
import type { Sql } from "../platform/db.ts";
import { TickingTask } from "../platform/loop.ts";
import { disabledWorkerIds, listCommandedWorkerIds } from "./store.ts";

/** Redelivered if not acked by then; a Worker acks a command once it has acted on it. */
const COMMAND_ACK_WAIT_NS = 30 * 1_000_000_000;

/** `streamReplicas`: the copies the commands stream is created with if it is missing. */
export async function ensureWorkerConsumer(
  nc: NatsConnection,
  prefix: string,
  workerId: string,
  streamReplicas: number,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const add = () =>
    jsm.consumers.add(streams(prefix).commands.name, {
      durable_name: workerConsumerName(workerId),
      filter_subject: subjects.workerCommands(prefix, workerId),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: COMMAND_ACK_WAIT_NS,
    });
  try {
    await add();
  } catch (err) {
    // The streams are checked only when missing (a NATS that lost its store), not on every
    // registration, which holds its token or Worker row locked meanwhile.
    if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.StreamNotFound) throw err;
    await ensurePrefixStreams(nc, prefix, streamReplicas);
    await add();
  }
}

export async function deleteWorkerConsumer(
  nc: NatsConnection,
  prefix: string,
  workerId: string,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.consumers.delete(streams(prefix).commands.name, workerConsumerName(workerId));
  } catch (err) {
    if (!(err instanceof Error) || !/consumer not found/i.test(err.message)) throw err;
  }
}

export interface CommandConsumerKeeperOptions {
  sql: Sql;
  broker: Broker;
  subjectPrefix: string;
  logger: Logger;
  tickMs?: number;
}

/**
 * Looks at <PREFIX>_COMMANDS every tick (one stream info request): a missing stream is
 * created, and a stream this Manager has not seen yet (its first look, or one re-created
 * since: a new creation time) gets the consumer of every Worker that is not disabled and
 * lacks one. Commands stored in the new stream before a consumer exists are not lost: the
 * consumers deliver everything the stream holds.
 */
export class CommandConsumerKeeper extends TickingTask {
  /** Creation time of the stream whose consumers were last checked. */
  private checkedStream: string | undefined;
  /** Consumers this keeper created: what the fault tests read. */
  readonly counters = { consumersCreated: 0 };

  constructor(private readonly options: CommandConsumerKeeperOptions) {
    super(options, "cannot check the Workers' command consumers; retrying");
  }

  protected async tick(): Promise<void> {
    const nc = this.options.broker.connection();
    if (!nc) return;
    const { subjectPrefix: prefix } = this.options;
    const stream = streams(prefix).commands.name;
    const jsm = await jetstreamManager(nc);
    let info = await streamInfo(jsm, stream);
    if (!info) {
      await ensurePrefixStreams(nc, prefix, this.options.broker.streamReplicas);
      info = await jsm.streams.info(stream);
    }
    if (info.created === this.checkedStream) return;
    const existing = new Set<string>();
    for await (const consumer of jsm.consumers.list(stream)) existing.add(consumer.name);
    const missing = (await listCommandedWorkerIds(this.options.sql)).filter(
      (workerId) => !existing.has(workerConsumerName(workerId)),
    );
    for (const workerId of missing) {
      await ensureWorkerConsumer(nc, prefix, workerId, this.options.broker.streamReplicas);
    }
    // A Worker disabled while this ran must not keep the consumer it was just given.
    for (const workerId of await disabledWorkerIds(this.options.sql, missing)) {
      await deleteWorkerConsumer(nc, prefix, workerId);
    }
    this.counters.consumersCreated += missing.length;
    if (missing.length > 0) {
      this.options.logger.warn("created missing command consumers", { stream, workers: missing.length });
    }
    this.checkedStream = info.created;
  }
}

async function streamInfo(jsm: JetStreamManager, stream: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(stream);
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return undefined;
    throw err;
  }
}
