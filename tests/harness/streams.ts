import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { streams } from "@tjm/protocol";

/**
 * Removes the JetStream streams a Manager created for a test's subject prefix, through the
 * given connection or a new one to the given URL.
 */
export async function deleteStreams(nats: string | NatsConnection, prefix: string): Promise<void> {
  const nc = typeof nats === "string" ? await connect({ servers: nats }) : nats;
  try {
    const jsm = await jetstreamManager(nc);
    for (const stream of Object.values(streams(prefix)))
      await jsm.streams.delete(stream.name).catch(() => false);
  } finally {
    if (typeof nats === "string") await nc.close();
  }
}
