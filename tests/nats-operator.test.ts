import { readFile, stat } from "node:fs/promises";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { encodeUser, fmtCreds, type User } from "@nats-io/jwt";
import { createUser } from "@nats-io/nkeys";
import {
  AuthorizationError,
  connect,
  credsAuthenticator,
  type NatsConnection,
  PermissionViolationError,
  type Status,
} from "@nats-io/transport-node";
import { type OperatorModeNats, startOperatorModeNats } from "@tjm/devstack/nats-operator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Creds for a fresh user signed with the account's signing key, as the Manager mints them. */
async function userCreds(
  nats: OperatorModeNats,
  permissions: Partial<User>,
  validity: { exp?: number } = {},
): Promise<Uint8Array> {
  const user = createUser();
  const jwt = await encodeUser("test-user", user, nats.accountPublicKey, permissions, {
    signer: nats.accountSigningSeed,
    ...validity,
  });
  return fmtCreds(jwt, user);
}

async function nextError(statuses: AsyncIterable<Status>): Promise<Error> {
  for await (const status of statuses) if (status.type === "error") return status.error;
  throw new Error("the connection closed without an error status");
}

describe("the operator-mode NATS harness", () => {
  let nats: OperatorModeNats;
  let manager: NatsConnection;
  beforeAll(async () => {
    nats = await startOperatorModeNats();
    manager = await connect({
      servers: nats.url,
      authenticator: credsAuthenticator(encoder.encode(nats.managerCreds)),
    });
  });
  afterAll(async () => {
    await manager?.close();
    await nats?.stop();
  });

  it("refuses a connection without credentials", async () => {
    const err = await connect({ servers: nats.url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthorizationError);
    expect((err as Error).message).toBe("Authorization Violation");
  });

  it("lets the manager user use JetStream in the TJM account", async () => {
    expect((await stat(nats.managerCredsFile)).mode & 0o777).toBe(0o600);
    expect(await readFile(nats.managerCredsFile, "utf8")).toBe(nats.managerCreds);

    const jsm = await jetstreamManager(manager);
    await jsm.streams.add({ name: "OPERATOR_TEST", subjects: ["optest.>"] });
    const js = jetstream(manager);
    const ack = await js.publish("optest.hello", "hello");
    expect(ack).toMatchObject({ stream: "OPERATOR_TEST", seq: 1 });
    const consumer = await js.consumers.get("OPERATOR_TEST");
    const message = await consumer.next({ expires: 5_000 });
    expect(message?.subject).toBe("optest.hello");
    expect(decoder.decode(message?.data)).toBe("hello");
  });

  it("enforces a signed user's permissions, reporting a denied publish as an error status", async () => {
    // Only x.allowed may reach this subscription: x.denied is sent first on the same
    // connection, so had the server let it through it would arrive first.
    const delivered = manager.subscribe("x.*", { max: 1 });
    await manager.flush();
    const nc = await connect({
      servers: nats.url,
      inboxPrefix: "_INBOX.restricted",
      authenticator: credsAuthenticator(
        await userCreds(nats, {
          pub: { allow: ["x.allowed"] },
          sub: { allow: ["_INBOX.restricted.>"] },
        }),
      ),
    });
    try {
      // Subscribe to statuses before publishing: the violation arrives asynchronously.
      const error = nextError(nc.status());
      nc.publish("x.denied", "no");
      nc.publish("x.allowed", "yes");

      for await (const message of delivered) expect(message.subject).toBe("x.allowed");
      expect(await error).toBeInstanceOf(PermissionViolationError);
      expect(await error).toMatchObject({
        message: 'Permissions Violation for Publish to "x.denied"',
        operation: "publish",
        subject: "x.denied",
      });
      // A publish violation does not cost the connection.
      expect(nc.isClosed()).toBe(false);
    } finally {
      await nc.close();
    }
  });

  it("refuses a user whose JWT has expired", async () => {
    const now = Math.floor(Date.now() / 1000);
    // One minted the same way but still valid connects, so the expiry is what gets refused.
    const valid = await connect({
      servers: nats.url,
      authenticator: credsAuthenticator(await userCreds(nats, {}, { exp: now + 60 })),
    });
    await valid.close();

    const err = await connect({
      servers: nats.url,
      authenticator: credsAuthenticator(await userCreds(nats, {}, { exp: now - 60 })),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthorizationError);
    expect((err as Error).message).toBe("Authorization Violation");
  });
});
