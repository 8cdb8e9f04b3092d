/**
 * The NATS an execution cluster (cluster.ts) runs on: the bench's open single server, or a
 * private three-node cluster (devstack's, routes on loopback) in operator mode with streams of
 * three replicas, as compose.yaml deploys TJM. The Manager connects with the cluster's manager
 * credentials and mints each Worker's user JWT with the account signing key; the Workers get
 * every node's URL from their registration.
 */
import { type Authenticator, credsAuthenticator } from "@nats-io/transport-node";
import { startNatsCluster } from "@tjm/devstack/nats-cluster";
import type { BenchContext } from "../scenario.ts";

/** Nodes of the cluster, and so replicas of every stream. */
const CLUSTER_NODES = 3;

export interface BenchNats {
  /** Every server, comma-separated: a NATS_URL. */
  url: string;
  /** Added to the Manager's environment: its NATS authentication and stream replicas. */
  managerSettings: Record<string, string>;
  /** How the bench's own connection authenticates; none on the open server. */
  authenticator: Authenticator | undefined;
}

/** The bench's shared server: open, one replica per stream (the Manager's defaults). */
export const singleServer = (context: BenchContext): BenchNats => ({
  url: context.natsUrl,
  managerSettings: {},
  authenticator: undefined,
});

/** Starts the three-node cluster; it is stopped (and its stores removed) when the run ends. */
export async function startThreeNodeCluster(context: BenchContext): Promise<BenchNats> {
  const cluster = await startNatsCluster({ size: CLUSTER_NODES });
  context.cleanup.defer("stop the NATS cluster", () => cluster.stop());
  return {
    url: cluster.url,
    managerSettings: {
      NATS_URL: cluster.url,
      NATS_AUTH: "jwt",
      NATS_CREDS_FILE: cluster.managerCredsFile,
      NATS_ACCOUNT_PUBLIC_KEY: cluster.accountPublicKey,
      NATS_ACCOUNT_SIGNING_KEY_SEED: cluster.accountSigningSeed,
      NATS_STREAM_REPLICAS: String(CLUSTER_NODES),
    },
    authenticator: credsAuthenticator(new TextEncoder().encode(cluster.managerCreds)),
  };
}
