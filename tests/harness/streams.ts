import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { streams } from "@tjm/protocol";

/** Removes the JetStream streams a Manager created for a test's subject prefix. */
export async function deleteStreams(natsUrl: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    for (const stream of Object.values(streams(prefix)))
      await jsm.streams.delete(stream.name).catch(() => false);
  } finally {
    await nc.close();
  }
}
