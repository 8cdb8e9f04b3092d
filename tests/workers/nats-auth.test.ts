/**
 * Worker credentials against a real nats-server in operator mode: what each Worker's user
 * JWT allows is enforced by the server, not by our code.
 */
import { jetstream } from "@nats-io/jetstream";
import { decode } from "@nats-io/jwt";
import {
  connect,
  jwtAuthenticator,
  type NatsConnection,
  PermissionViolationError,
} from "@nats-io/transport-node";
import { type OperatorModeNats, startOperatorModeNats } from "@tjm/devstack/nats-operator";
import { waitFor } from "@tjm/devstack/services";
import {
  encodeMessage,
  examples,
  PROTOCOL_VERSION,
  ReportSchema,
  streams,
  subjects,
  workerConsumerName,
  workerInboxPrefix,
} from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import {
  challenge,
  credentialsBody,
  type EnrolledWorker,
  enroll,
  heartbeat,
  postJson,
} from "../harness/workers.ts";
import { getWorker } from "../harness/workers-api.ts";

const TTL_SECONDS = 30;

let nats: OperatorModeNats;
let manager: TestManager;
let a: EnrolledWorker;
let b: EnrolledWorker;
const connections: NatsConnection[] = [];

beforeAll(async () => {
  nats = await startOperatorModeNats();
  manager = await TestManager.start({ natsUrl: nats.url, natsAuth: { ...nats, ttlSeconds: TTL_SECONDS } });
  await waitFor(
    "the Manager's NATS connection",
    async () => (await fetch(`${manager.baseUrl}/api/health/ready`)).ok,
  );
  a = await enroll(manager, { name: "worker-a" });
  b = await enroll(manager, { name: "worker-b" });
});
afterAll(async () => {
  for (const nc of connections) await nc.close().catch(() => {});
  await manager?.close();
  await nats?.stop();
});

async function connectAs(worker: EnrolledWorker, userJwt = worker.registration.userJwt ?? "") {
  const nc = await connect({
    servers: nats.url,
    authenticator: jwtAuthenticator(userJwt, worker.keyPair.getSeed()),
    inboxPrefix: workerInboxPrefix(manager.subjectPrefix, worker.workerId),
  });
  connections.push(nc);
  return nc;
}

/** The next permission violation the server reports on this connection. */
async function nextViolation(nc: NatsConnection): Promise<PermissionViolationError> {
  for await (const status of nc.status()) {
    if (status.type === "error" && status.error instanceof PermissionViolationError) return status.error;
  }
  throw new Error("the connection closed without a permission violation");
}

describe("Worker user JWTs", () => {
  it("are signed by the account signing key for the Worker's own NKey, expire, and list only its subjects", () => {
    const claims = decode<Record<string, unknown>>(a.registration.userJwt ?? "");
    const prefix = manager.subjectPrefix;
    const consumer = `${streams(prefix).commands.name}.${workerConsumerName(a.workerId)}`;
    expect(claims.sub).toBe(a.keyPair.getPublicKey());
    expect(claims.iss).not.toBe(nats.accountPublicKey);
    // The JWT library reads the clock for iat itself, so a second may tick between the two.
    const lifetime = (claims.exp as number) - claims.iat;
    expect(lifetime).toBeGreaterThanOrEqual(TTL_SECONDS - 1);
    expect(lifetime).toBeLessThanOrEqual(TTL_SECONDS);
    expect(Date.parse(a.registration.userJwtExpiresAt ?? "")).toBe((claims.exp as number) * 1000);
    expect(claims.nats).toMatchObject({
      issuer_account: nats.accountPublicKey,
      bearer_token: false,
      pub: {
        allow: [
          `${prefix}.workers.${a.workerId}.heartbeat`,
          `${prefix}.workers.${a.workerId}.progress`,
          `${prefix}.workers.${a.workerId}.reports`,
          `$JS.API.CONSUMER.INFO.${consumer}`,
          `$JS.API.CONSUMER.MSG.NEXT.${consumer}`,
          `$JS.ACK.${consumer}.>`,
        ],
      },
      sub: { allow: [`_INBOX.${prefix}.${a.workerId}.>`] },
    });
  });

  it("connect only with the Worker's own seed", async () => {
    await expect(
      connect({
        servers: nats.url,
        authenticator: jwtAuthenticator(a.registration.userJwt ?? "", b.keyPair.getSeed()),
      }),
    ).rejects.toThrow(/authorization/i);
    await expect(connect({ servers: nats.url })).rejects.toThrow(/authorization/i);
  });
});

describe("Worker A on NATS in operator mode", () => {
  it("heartbeats: the Manager hears it", async () => {
    const nc = await connectAs(a);
    // Core NATS: a heartbeat sent before the Manager's subscription reached the server is lost,
    // as in production, where the next one follows an interval later.
    await waitFor("A's heartbeat", async () => {
      heartbeat(nc, manager.subjectPrefix, a, 3);
      return (await getWorker(manager, a.workerId)).freeCapacity === 3;
    });
  });

  it("pulls and acks its own commands", async () => {
    const nc = await connectAs(a);
    await manager.request(`/api/v1/operations/workers/${a.workerId}/drain`, { method: "POST" });
    const consumer = await jetstream(nc).consumers.get(
      streams(manager.subjectPrefix).commands.name,
      workerConsumerName(a.workerId),
    );
    const received: unknown[] = [];
    await waitFor("the drain command", async () => {
      const batch = await consumer.fetch({ max_messages: 1, expires: 1000 });
      for await (const message of batch) {
        received.push(message.json<{ data: unknown }>().data);
        message.ack();
      }
      return received.length > 0;
    });
    expect(received).toEqual([{ type: "drain", protocolVersion: PROTOCOL_VERSION }]);
  });

  it("stores a report on its own reports subject through JetStream", async () => {
    const nc = await connectAs(a);
    const report = encodeMessage(ReportSchema, {
      ...examples.reports.accepted,
      workerId: a.workerId,
      instanceId: a.instanceId,
    });
    const ack = await jetstream(nc).publish(
      subjects.workerReports(manager.subjectPrefix, a.workerId),
      report,
    );
    expect(ack.stream).toBe(streams(manager.subjectPrefix).reports.name);
  });

  it("is refused publishing on B's heartbeat subject; B hears nothing", async () => {
    const nc = await connectAs(a);
    const violation = nextViolation(nc);
    heartbeat(nc, manager.subjectPrefix, b);
    const error = await violation;
    expect(error.operation).toBe("publish");
    expect(error.subject).toBe(subjects.workerHeartbeat(manager.subjectPrefix, b.workerId));
    expect((await getWorker(manager, b.workerId)).lastHeartbeatAt).toBe(
      (await getWorker(manager, b.workerId)).registeredAt,
    );
  });

  it("is refused publishing on B's reports subject", async () => {
    const nc = await connectAs(a);
    const violation = nextViolation(nc);
    nc.publish(subjects.workerReports(manager.subjectPrefix, b.workerId), new Uint8Array([123, 125]));
    expect((await violation).subject).toBe(subjects.workerReports(manager.subjectPrefix, b.workerId));
  });

  it("cannot read or pull B's consumer", async () => {
    const nc = await connectAs(a);
    const stream = streams(manager.subjectPrefix).commands.name;
    const violation = nextViolation(nc);
    await expect(
      jetstream(nc, { timeout: 1500 }).consumers.get(stream, workerConsumerName(b.workerId)),
    ).rejects.toThrow();
    expect((await violation).subject).toBe(
      `$JS.API.CONSUMER.INFO.${stream}.${workerConsumerName(b.workerId)}`,
    );

    const pullViolation = nextViolation(nc);
    nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${workerConsumerName(b.workerId)}`, new Uint8Array());
    expect((await pullViolation).operation).toBe("publish");
  });

  it("cannot subscribe outside its inbox prefix (B's inbox, every subject)", async () => {
    const nc = await connectAs(a);
    for (const subject of [`${workerInboxPrefix(manager.subjectPrefix, b.workerId)}.>`, ">"]) {
      const violation = nextViolation(nc);
      nc.subscribe(subject);
      const error = await violation;
      expect(error.operation).toBe("subscription");
      expect(error.subject).toBe(subject);
    }
  });
});

describe("credentials refresh", () => {
  it("issues a later-expiring JWT that connects; a disabled Worker gets none", async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const answered = await challenge(manager, b.workerId, "credentials");
    const response = await postJson(manager, "/api/v1/worker/credentials", credentialsBody(b, answered));
    expect(response.status).toBe(200);
    const refreshed = await response.json();
    expect(Date.parse(refreshed.userJwtExpiresAt)).toBeGreaterThan(
      Date.parse(b.registration.userJwtExpiresAt ?? ""),
    );
    const nc = await connectAs(b, refreshed.userJwt);
    await waitFor("B's heartbeat", async () => {
      heartbeat(nc, manager.subjectPrefix, b, 1);
      return (await getWorker(manager, b.workerId)).freeCapacity === 1;
    });

    await manager.request(`/api/v1/operations/workers/${b.workerId}/disable`, { method: "POST" });
    const refused = await postJson(manager, "/api/v1/worker/challenges", {
      protocolVersion: PROTOCOL_VERSION,
      workerId: b.workerId,
      purpose: "credentials",
    });
    expect(refused.status).toBe(403);
  });
});
