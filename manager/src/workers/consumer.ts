/**
 * Each Worker's durable consumer on <PREFIX>_COMMANDS, filtered to its own commands subject.
 * The Manager creates it at registration (a Worker's credentials cannot create consumers) and
 * deletes it when the Worker is disabled, which cuts the Worker off from its commands at once,
 * before its user JWT expires.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstreamManager,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { streams, subjects, workerConsumerName } from "@tjm/protocol";
import { ensurePrefixStreams } from "../outbox/index.ts";

/** Redelivered if not acked by then; a Worker acks a command once it has acted on it. */
const COMMAND_ACK_WAIT_NS = 30 * 1_000_000_000;

export async function ensureWorkerConsumer(
  nc: NatsConnection,
  prefix: string,
  workerId: string,
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
    await ensurePrefixStreams(nc, prefix);
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
