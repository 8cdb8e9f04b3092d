import type {
  Authenticator,
  ConnectionOptions,
  Msg,
  NatsConnection,
  Subscription,
} from "@nats-io/transport-node";
import type { Logger } from "@tjm/platform";
import { withTimeout } from "./db.ts";

/** What the Manager core needs from NATS; the entrypoint decides how to connect. */
export interface Broker {
  /** Resolves when the broker answered a PING within `timeoutMs`, rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  /** The live connection, or undefined until the first connect succeeds. */
  connection(): NatsConnection | undefined;
  /**
   * A core NATS subscription that starts as soon as the broker is connected (at once if it
   * is) and rides every reconnect; `unsubscribe` ends it, or the wish for it if not yet connected.
   */
  subscribe(subject: string, onMessage: MessageHandler): { unsubscribe(): void };
  /**
   * Copies of each stream and bucket the Manager creates on this NATS (NATS_STREAM_REPLICAS):
   * 1 on a single server, 3 or 5 on a cluster.
   */
  readonly streamReplicas: number;
  /** This process's NATS link, for the metrics: up now, and how many times it came back. */
  status?(): { connected: boolean; reconnects: number };
  close(): Promise<void>;
}

export type MessageHandler = (error: Error | null, message: Msg) => void;

export type Connect = (options: ConnectionOptions) => Promise<NatsConnection>;

const RETRY_FIRST_CONNECT_MS = 1000;

export interface BrokerOptions {
  authenticator?: Authenticator;
  /** Default 1. */
  streamReplicas?: number;
}

/**
 * Connects in the background: a Manager whose NATS is down still starts and reports
 * "broker down" on readiness until NATS answers. Once connected, the client reconnects
 * forever by itself, to any of `servers` (or a server the cluster announced since).
 */
export function createBroker(
  connect: Connect,
  servers: string | string[],
  logger: Logger,
  { authenticator, streamReplicas = 1 }: BrokerOptions = {},
): Broker {
  const url = [servers].flat().join(",");
  let connection: NatsConnection | undefined;
  let closed = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  const link = { connected: false, reconnects: 0 };
  // Subscriptions asked for; each gets its NATS subscription once connected.
  const wanted = new Set<{ subject: string; onMessage: MessageHandler; sub?: Subscription }>();
  const attach = (
    nc: NatsConnection,
    want: { subject: string; onMessage: MessageHandler; sub?: Subscription },
  ) => {
    want.sub = nc.subscribe(want.subject, { callback: want.onMessage });
  };

  const watch = async (nc: NatsConnection) => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnect") {
        logger.warn(`NATS ${status.type}`, { server: status.server });
        link.connected = status.type === "reconnect";
        if (status.type === "reconnect") link.reconnects++;
      }
    }
  };

  const attempt = async (): Promise<void> => {
    try {
      const nc = await connect({
        servers,
        name: "tjm-manager",
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1000,
        // A server that hangs (paused, partitioned) without closing the socket is left for
        // another of the cluster within 15 s, instead of nats.js's default 2 min x 2 pings.
        pingInterval: 5_000,
        maxPingOut: 3,
        ...(authenticator ? { authenticator } : {}),
      });
      if (closed) {
        await nc.close();
        return;
      }
      connection = nc;
      link.connected = true;
      for (const want of wanted) attach(nc, want);
      logger.info("connected to NATS", { server: nc.getServer() });
      void watch(nc);
    } catch (err) {
      if (closed) return;
      logger.warn("NATS is not reachable yet; retrying", { url, err });
      retryTimer = setTimeout(() => void attempt(), RETRY_FIRST_CONNECT_MS);
    }
  };
  void attempt();

  return {
    async ping(timeoutMs) {
      if (!connection) throw new Error(`not connected to NATS at ${url}`);
      if (connection.isClosed()) throw new Error("NATS connection is closed");
      await withTimeout(connection.flush(), timeoutMs, "NATS");
    },
    connection: () => (connection && !connection.isClosed() ? connection : undefined),
    streamReplicas,
    status: () => ({ ...link, connected: link.connected && connection?.isClosed() === false }),
    subscribe(subject, onMessage) {
      const want: { subject: string; onMessage: MessageHandler; sub?: Subscription } = { subject, onMessage };
      wanted.add(want);
      if (connection && !connection.isClosed()) attach(connection, want);
      return {
        unsubscribe() {
          wanted.delete(want);
          want.sub?.unsubscribe();
        },
      };
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      if (connection) await connection.close();
    },
  };
}
