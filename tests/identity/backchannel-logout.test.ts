/**
 * Back-channel logouts owed when TJM ends a session itself (identity/sessions/): queued in
 * backchannel_logout_outbox with the ending, sent by a Node Manager through oidc-provider's own
 * client (a logout token the provider signs), retried with backoff, refused for a private address
 * nobody named in PROVIDER_PRIVATE_NETWORK_HOSTS, and never lost to a Manager that stops between
 * the commit and the send. The receivers are real HTTP servers.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { SignInResult } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { waitFor } from "@tjm/devstack/services";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endSession } from "../../manager/src/identity/sessions/index.ts";
import { createTestAccount, createTestClient, resourceIndicator, signInAs } from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const RESOURCE = resourceIndicator(OPERATIONS_AUDIENCE);
const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";
const ENV = {
  // The receiver on 127.0.0.1 is named; 127.0.0.2 (the private-address case) is not.
  PROVIDER_PRIVATE_NETWORK_HOSTS: "127.0.0.1",
  BACKCHANNEL_LOGOUT_RETRY_BASE_MS: "50",
  BACKCHANNEL_LOGOUT_MAX_ATTEMPTS: "4",
};

/** A relying party's back-channel logout endpoint: records each POSTed logout_token by path. */
class Receiver {
  readonly tokens = new Map<string, string[]>();
  /** Statuses to answer at a path before answering 200. */
  readonly failFirst = new Map<string, number[]>();
  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(host: string): Promise<Receiver> {
    let receiver: Receiver | undefined;
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const token = new URLSearchParams(Buffer.concat(chunks).toString("utf8")).get("logout_token");
      const path = req.url ?? "/";
      if (req.method === "POST" && token !== null && receiver) {
        receiver.tokens.set(path, [...(receiver.tokens.get(path) ?? []), token]);
        const status = receiver.failFirst.get(path)?.shift();
        if (status !== undefined) return void res.writeHead(status).end();
      }
      res.writeHead(200).end();
    });
    server.listen(0, host);
    await once(server, "listening");
    receiver = new Receiver(server, `http://${host}:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  received(path: string): string[] {
    return this.tokens.get(path) ?? [];
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

let manager: TestManager;
let receiver: Receiver;
let privateReceiver: Receiver;

beforeAll(async () => {
  [manager, receiver, privateReceiver] = await Promise.all([
    TestManager.start({ env: ENV }),
    Receiver.start("127.0.0.1"),
    Receiver.start("127.0.0.2"),
  ]);
});
afterAll(async () => {
  receiver?.close();
  privateReceiver?.close();
  await manager?.close();
});

/** An account signed in to a client whose back-channel logout URI is `uri`; the session's uid. */
async function signedInWithLogoutUri(uri: string): Promise<{
  accountId: string;
  clientId: string;
  tokens: SignInResult;
  uid: string;
}> {
  const client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
  // Client management has no back-channel fields yet; the provider reads them from the row.
  await manager.sql`
    update oauth_clients
    set backchannel_logout_uri = ${uri},
      metadata = metadata || '{"backchannel_logout_session_required": true}'
    where client_id = ${client.clientId}`;
  const account = await createTestAccount(manager.sql, { roles: ["operator"] });
  const tokens = await signInAs(manager.issuerUrl, client, account, RESOURCE, "openid");
  const [session] = await manager.sql<{ uid: string }[]>`
    select uid from oidc_records where model = 'Session' and sids @> array[${tokens.claims.sid as string}::text]`;
  return {
    accountId: account.accountId,
    clientId: client.clientId,
    tokens,
    uid: (session as { uid: string }).uid,
  };
}

async function outboxRow(clientId: string) {
  const [row] = await manager.sql<
    { attempts: number; sentAt: Date | null; failedAt: Date | null; lastError: string | null }[]
  >`select attempts, sent_at, failed_at, last_error from backchannel_logout_outbox where client_id = ${clientId}`;
  return row;
}

/** Ends the session as a portal route would: the sender woken after the commit. */
function endAndWake(accountId: string, uid: string) {
  return endSession(manager.sql, accountId, uid, () => manager.manager.backchannelLogouts?.wake());
}

describe("ending a session of a client with a back-channel logout URI", () => {
  it("sends the client a logout token signed by the provider, naming the account and the sid", async () => {
    const path = "/signed";
    const { accountId, clientId, tokens, uid } = await signedInWithLogoutUri(`${receiver.origin}${path}`);

    expect((await endAndWake(accountId, uid)).logoutsQueued).toBe(1);
    await waitFor("the logout token", async () => receiver.received(path).length > 0, 10_000);

    const { payload } = await jwtVerify(
      receiver.received(path)[0] as string,
      createRemoteJWKSet(new URL(`${manager.issuerUrl}/jwks`)),
      { issuer: manager.issuerUrl, audience: clientId, typ: "logout+jwt", algorithms: ["RS256"] },
    );
    expect(payload).toMatchObject({
      sub: accountId,
      sid: tokens.claims.sid,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    });
    await waitFor("the row marked sent", async () => (await outboxRow(clientId))?.sentAt != null, 10_000);
    expect(await outboxRow(clientId)).toMatchObject({ attempts: 1, failedAt: null });
  });

  it("retries a receiver that answers 500 twice, which gets it on the third try", async () => {
    const path = "/flaky";
    receiver.failFirst.set(path, [500, 500]);
    const { accountId, clientId, uid } = await signedInWithLogoutUri(`${receiver.origin}${path}`);

    await endAndWake(accountId, uid);
    await waitFor("the row marked sent", async () => (await outboxRow(clientId))?.sentAt != null, 10_000);
    expect(receiver.received(path)).toHaveLength(3);
    expect(await outboxRow(clientId)).toMatchObject({
      attempts: 3,
      failedAt: null,
      lastError: expect.stringContaining("got: 500"),
    });
  });

  it("refuses a private address not named in PROVIDER_PRIVATE_NETWORK_HOSTS and marks the row failed with the reason", async () => {
    const path = "/private";
    const { accountId, clientId, uid } = await signedInWithLogoutUri(`${privateReceiver.origin}${path}`);

    await endAndWake(accountId, uid);
    await waitFor("the row marked failed", async () => (await outboxRow(clientId))?.failedAt != null, 10_000);
    expect(await outboxRow(clientId)).toMatchObject({
      attempts: 1,
      sentAt: null,
      lastError: expect.stringContaining("special-use IP address"),
    });
    expect(privateReceiver.received(path)).toEqual([]);
    const { body } = await manager.manager.metrics.scrape();
    expect(body).toMatch(/^tjm_backchannel_logouts_total\{outcome="failed"\} [1-9]/m);
  });
});

describe("a Manager that stops between the commit and the send", () => {
  it("loses nothing: the rows stay queued and the next Manager's sender sends them", async () => {
    const path = "/after-restart";
    const { accountId, clientId, tokens, uid } = await signedInWithLogoutUri(`${receiver.origin}${path}`);
    await manager.manager.backchannelLogouts?.stop();

    expect((await endSession(manager.sql, accountId, uid)).logoutsQueued).toBe(1);
    expect(await outboxRow(clientId)).toMatchObject({ attempts: 0, sentAt: null, failedAt: null });

    const next = await TestManager.start({
      schema: manager.schema,
      env: { ...ENV, OIDC_ISSUER_URL: manager.issuerUrl },
    });
    try {
      await waitFor("the logout token", async () => receiver.received(path).length > 0, 10_000);
      const { payload } = await jwtVerify(
        receiver.received(path)[0] as string,
        createRemoteJWKSet(new URL(`${manager.issuerUrl}/jwks`)),
        { issuer: manager.issuerUrl, audience: clientId, typ: "logout+jwt" },
      );
      expect(payload).toMatchObject({ sub: accountId, sid: tokens.claims.sid });
      await waitFor("the row marked sent", async () => (await outboxRow(clientId))?.sentAt != null, 10_000);
    } finally {
      await next.close({ keepStreams: true });
    }
  });
});
