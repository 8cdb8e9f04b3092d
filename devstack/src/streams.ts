import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { presenceBucket, streams } from "@tjm/protocol";

/**
 * Removes the JetStream streams a Manager created for a test's or a bench run's subject prefix
 * (and its presence bucket), through the given connection or a new one to the given URL.
 */
export async function deleteStreams(nats: string | NatsConnection, prefix: string): Promise<void> {
  const nc = typeof nats === "string" ? await connect({ servers: nats }) : nats;
  try {
    const jsm = await jetstreamManager(nc);
    const names = [
      ...Object.values(streams(prefix)).map((stream) => stream.name),
      `KV_${presenceBucket(prefix)}`,
    ];
    for (const name of names) await jsm.streams.delete(name).catch(() => false);
  } finally {
    if (typeof nats === "string") await nc.close();
  }
}
