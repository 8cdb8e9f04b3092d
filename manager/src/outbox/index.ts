import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@tjm/platform";
import { streams } from "@tjm/protocol";
import type { Broker } from "../platform/broker.ts";
import type { Sql } from "../platform/db.ts";
import { ensureStreams, jetStreamPublish } from "./jetstream.ts";
import { type OutboxPublish, OutboxRelay } from "./relay.ts";

export type { EventEnvelope } from "./relay.ts";
export { OutboxRelay } from "./relay.ts";

export interface OutboxRelayDeps {
  sql: Sql;
  schema: string;
  subjectPrefix: string;
  broker: Broker;
  logger: Logger;
}

/** The prefix's three streams (commands, reports, events); idempotent. */
export function ensurePrefixStreams(nc: NatsConnection, prefix: string): Promise<void> {
  const { commands, reports, events } = streams(prefix);
  return ensureStreams(nc, [commands, reports, events]);
}

/**
 * The Manager's relay: publishes through whatever connection the broker holds, making sure
 * the prefix's streams exist on it first: once per connection, and again after any failed
 * publish. A stream deleted under a running Manager (or lost with a NATS store) answers
 * publishes with "no responders"; the batch rolls back and its retry recreates the stream.
 */
export function createOutboxRelay(deps: OutboxRelayDeps): OutboxRelay {
  const publishers = new WeakMap<NatsConnection, OutboxPublish>();
  const publisherFor = (nc: NatsConnection): OutboxPublish => {
    const known = publishers.get(nc);
    if (known) return known;
    const forget = () => {
      if (publishers.get(nc) === publisher) publishers.delete(nc);
    };
    const streamsReady = ensurePrefixStreams(nc, deps.subjectPrefix);
    const publish = jetStreamPublish(nc);
    const publisher: OutboxPublish = async (subject, payload, messageId) => {
      try {
        await streamsReady;
        await publish(subject, payload, messageId);
      } catch (err) {
        forget();
        throw err;
      }
    };
    // Settled here too, so a failure nobody awaits yet is not an unhandled rejection.
    streamsReady.catch(forget);
    publishers.set(nc, publisher);
    return publisher;
  };
  return new OutboxRelay({
    sql: deps.sql,
    schema: deps.schema,
    subjectPrefix: deps.subjectPrefix,
    logger: deps.logger,
    publisher: () => {
      const nc = deps.broker.connection();
      return nc ? publisherFor(nc) : undefined;
    },
  });
}
