/**
 * A private NATS cluster on loopback: `size` nats-server processes joined by routes, each
 * with JetStream on a store of its own, in operator mode (the trust of nats-operator.ts, the
 * same on every server) so a Manager mints per-Worker credentials as in production. A node
 * can be killed and started again on its ports and store, as a machine that fails and comes
 * back; what it held is then caught up from the others.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import { createOperatorTrust } from "./nats-operator.ts";
import { freePort, type NatsServer, spawnNatsServer, waitFor } from "./services.ts";

export interface NatsClusterNode {
  /** Its server_name: n1, n2 … */
  readonly name: string;
  /** nats://127.0.0.1:<port>; the same after a restart. */
  readonly url: string;
  readonly running: boolean;
  /** SIGKILL by default: the process dies with whatever it had not written. */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Starts it again on its ports and store. */
  start(): Promise<void>;
}

export interface NatsCluster {
  nodes: NatsClusterNode[];
  /** Every node's URL, comma-separated: a NATS_URL (and what the Manager hands Workers). */
  url: string;
  /** "A…" identity of the TJM account. */
  accountPublicKey: string;
  /** "SA…" seed of the account's signing key (what the Manager signs Worker user JWTs with). */
  accountSigningSeed: string;
  /** .creds text of a manager user with no pub/sub restrictions. */
  managerCreds: string;
  /** Path of a 0600 file holding managerCreds. */
  managerCredsFile: string;
  /** Stops every node and removes the stores. */
  stop(): Promise<void>;
}

const encoder = new TextEncoder();

/** How long a started cluster may take to elect its JetStream leader and take an R<size> stream. */
const JETSTREAM_READY_MS = 30_000;

/**
 * Starts the cluster and resolves once JetStream accepts a stream with one replica per node.
 * Ports are picked free up front (each node must know the others' route ports, and keeps its
 * client port across restarts), so a port taken between the pick and the start fails the start.
 */
export async function startNatsCluster(options: { size?: number } = {}): Promise<NatsCluster> {
  const size = options.size ?? 3;
  const trust = await createOperatorTrust();
  const dir = await mkdtemp(join(tmpdir(), "tjm-nats-cluster-"));
  const managerCredsFile = join(dir, "manager.creds");
  await writeFile(managerCredsFile, trust.managerCreds, { mode: 0o600 });
  const ports: { client: number; route: number }[] = [];
  for (let index = 0; index < size; index++)
    ports.push({ client: await freePort(), route: await freePort() });
  const q = JSON.stringify;

  const nodes = await Promise.all(
    ports.map(async ({ client, route }, index) => {
      const name = `n${index + 1}`;
      const configFile = join(dir, `${name}.conf`);
      await mkdir(join(dir, name));
      await writeFile(
        configFile,
        [
          `server_name: ${name}`,
          "host: 127.0.0.1",
          `port: ${client}`,
          ...trust.serverConfig,
          `jetstream: { store_dir: ${q(join(dir, name))} }`,
          "cluster: {",
          "  name: tjm-test",
          `  listen: ${q(`127.0.0.1:${route}`)}`,
          `  routes: ${q(ports.filter((_, other) => other !== index).map((peer) => `nats-route://127.0.0.1:${peer.route}`))}`,
          "}",
          "",
        ].join("\n"),
      );
      let server: NatsServer | undefined;
      const node: NatsClusterNode = {
        name,
        url: `nats://127.0.0.1:${client}`,
        get running() {
          return server !== undefined;
        },
        async stop(signal = "SIGKILL") {
          const stopping = server;
          server = undefined;
          await stopping?.stop(signal);
        },
        async start() {
          if (!server) server = await spawnNatsServer(["-c", configFile], undefined);
        },
      };
      return node;
    }),
  );
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop("SIGTERM")));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(nodes.map((node) => node.start()));
    await untilJetStreamTakes(
      nodes.map((node) => node.url),
      trust.managerCreds,
      size,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nodes,
    url: nodes.map((node) => node.url).join(","),
    accountPublicKey: trust.accountPublicKey,
    accountSigningSeed: trust.accountSigningSeed,
    managerCreds: trust.managerCreds,
    managerCredsFile,
    stop,
  };
}

/** Until a stream with `replicas` copies can be created (a leader is elected and every peer known); it is deleted again. */
async function untilJetStreamTakes(servers: string[], creds: string, replicas: number): Promise<void> {
  const nc = await connect({ servers, authenticator: credsAuthenticator(encoder.encode(creds)) });
  try {
    // Not checked at creation: the API answers only once a leader is elected, which is what is waited for.
    const jsm = await jetstreamManager(nc, { timeout: 2000, checkAPI: false });
    const name = `CLUSTER_PROBE_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
    let last = "";
    await waitFor(
      () => `JetStream with ${replicas} replicas (last: ${last})`,
      async () => {
        try {
          await jsm.streams.add({
            name,
            subjects: [`cluster-probe.${name}`],
            num_replicas: replicas,
            storage: StorageType.Memory,
          });
          await jsm.streams.delete(name);
          return true;
        } catch (err) {
          last = (err as Error).message;
          return false;
        }
      },
      JETSTREAM_READY_MS,
      250,
    );
  } finally {
    await nc.close();
  }
}
