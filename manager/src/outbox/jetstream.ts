import { jetstream, jetstreamManager, type StreamConfig } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { streams } from "@tjm/protocol";
import type { OutboxPublish } from "./relay.ts";

/** 2 minutes (JetStream's default): a relay retrying a batch within it never stores a row twice. */
export const DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

/**
 * How long each pull of a consume() waits; it also sets the idle heartbeat (half of it) by
 * which the client notices that the server holding its consumer died. With nats.js's 30 s, a
 * Manager's consumers stalled 30 to 80 s after a cluster node was killed (the scale-out test),
 * long enough for the dispatch timeout to rerun leases the Workers had accepted.
 */
export const PULL_EXPIRES_MS = 5_000;

/**
 * Creates the streams, or brings an existing one's subjects, duplicate window and replica
 * count up to date (default 1 replica: a single server).
 */
export async function ensureStreams(
  nc: NatsConnection,
  streams: { name: string; subjects: string[] }[],
  replicas = 1,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const stream of streams) {
    const config: Partial<StreamConfig> & { name: string } = {
      name: stream.name,
      subjects: stream.subjects,
      duplicate_window: DUPLICATE_WINDOW_NS,
      num_replicas: replicas,
    };
    try {
      await jsm.streams.info(stream.name);
      await jsm.streams.update(stream.name, config);
    } catch (err) {
      if (!(err instanceof Error) || !/stream not found/i.test(err.message)) throw err;
      await jsm.streams.add(config);
    }
  }
}

/** The prefix's three streams (commands, reports, events), each with `replicas` copies; idempotent. */
export function ensurePrefixStreams(nc: NatsConnection, prefix: string, replicas: number): Promise<void> {
  const { commands, reports, events } = streams(prefix);
  return ensureStreams(nc, [commands, reports, events], replicas);
}

/** Publishes through JetStream and resolves only once the stream acknowledged storing it. */
export function jetStreamPublish(nc: NatsConnection): OutboxPublish {
  const js = jetstream(nc);
  return async (subject, payload, messageId) => {
    await js.publish(subject, payload, { msgID: messageId });
  };
}
