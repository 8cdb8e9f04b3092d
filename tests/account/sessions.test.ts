/**
 * The account portal's session routes (/api/v1/me/sessions…, /me/logout) on a Manager and a
 * second replica on the same database: what a revocation ends is refused on its very next
 * request on either, nothing else is, another account's session is a 404 like an unknown one,
 * and every change writes one audit row, refusals included. Also the audience table of every
 * route of this issue: 401 without a token, 403 with each other audience's token.
 */
import { refresh, type SignInResult } from "@tjm/devstack/oidc-client";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { createTestAccount, createTestClient, resourceIndicator, signInAs } from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { auditRows, PORTAL_RESOURCE, Portal, sessionUid } from "./portal.ts";

let manager: TestManager;
let replica: TestManager;
let portal: Portal;

beforeAll(async () => {
  manager = await TestManager.start();
  [replica, portal] = await Promise.all([
    TestManager.start({ schema: manager.schema, issuerUrl: manager.issuerUrl, background: false }),
    Portal.start(manager),
  ]);
});
afterAll(async () => {
  await replica?.close({ keepStreams: true });
  await manager?.close();
});

const ROUTES: [string, string, unknown?][] = [
  ["GET", "/api/v1/me/sessions"],
  ["DELETE", "/api/v1/me/sessions/some-session"],
  ["POST", "/api/v1/me/sessions/revoke-others"],
  ["GET", "/api/v1/me/accounts"],
  ["POST", "/api/v1/me/logout", { scope: "session" }],
  ["POST", "/api/v1/me/logout/all"],
  ["GET", "/api/v1/me/connected-apps"],
  ["DELETE", "/api/v1/me/connected-apps/some-client"],
  ["DELETE", "/api/v1/me"],
];

describe("who may call the routes", () => {
  let tokens: Record<string, string>;
  beforeAll(async () => {
    const { projectId } = await manager.createProject();
    const clientAdmin = await createTestAccount(manager.sql, { roles: ["client-admin"] });
    const adminClient = await createTestClient(manager.sql, { resources: [ADMIN_CONSOLE_AUDIENCE] });
    tokens = {
      operations: await manager.operatorToken(),
      tenant: await manager.tenantToken([projectId]),
      "admin-console": (
        await signInAs(manager.issuerUrl, adminClient, clientAdmin, resourceIndicator(ADMIN_CONSOLE_AUDIENCE))
      ).accessToken,
    };
  });

  it.each(ROUTES)("%s %s answers 401 without a token", async (method, path, body) => {
    const response = await portal.request(undefined, method, path, body);
    expect(response.status).toBe(401);
    expect((await response.json()).code).toBe("auth.token_missing");
  });

  it.each(ROUTES)(
    "%s %s answers 403 with an operations, tenant or admin-console token",
    async (method, path, body) => {
      for (const [audience, token] of Object.entries(tokens)) {
        const response = await portal.request(token, method, path, body);
        expect([audience, response.status]).toEqual([audience, 403]);
        expect((await response.json()).code).toBe("auth.audience_missing");
      }
    },
  );
});

describe("GET /api/v1/me/sessions", () => {
  it("lists the account's sessions with their clients, address, user agent and the current one, never another account's", async () => {
    const [account, other] = await Promise.all([portal.account(), portal.account()]);
    const [here, elsewhere, stranger] = await Promise.all([
      portal.signIn(account),
      portal.signIn(account),
      portal.signIn(other),
    ]);
    const response = await portal.request(here.accessToken, "GET", "/api/v1/me/sessions");
    expect(response.status).toBe(200);
    const { sessions } = await response.json();
    const session = (uid: string, current: boolean) => ({
      id: uid,
      current,
      createdAt: expect.any(String),
      lastUsedAt: expect.any(String),
      expiresAt: expect.any(String),
      clientAddress: "127.0.0.1",
      userAgent: expect.any(String),
      clients: [{ clientId: portal.client.clientId, name: "Account portal" }],
    });
    expect(sessions).toHaveLength(2);
    expect(sessions).toEqual(
      expect.arrayContaining([
        session(await sessionUid(manager.sql, here), true),
        session(await sessionUid(manager.sql, elsewhere), false),
      ]),
    );
    expect(JSON.stringify(sessions)).not.toContain(await sessionUid(manager.sql, stranger));
    // Never the session's id, which is its cookie's value.
    const [record] = await manager.sql<{ id: string }[]>`
      select id from oidc_records where model = 'Session' and uid = ${await sessionUid(manager.sql, here)}`;
    expect(JSON.stringify(sessions)).not.toContain(record?.id);

    // A refresh through the other session is its use: its lastUsedAt moves, the address stays.
    const lastUsed = async () => {
      const listed = await (await portal.request(here.accessToken, "GET", "/api/v1/me/sessions")).json();
      return listed.sessions.find((listedSession: { current: boolean }) => !listedSession.current);
    };
    const before = await lastUsed();
    await refresh({
      issuer: manager.issuerUrl,
      clientId: portal.client.clientId,
      refreshToken: elsewhere.refreshToken as string,
      resource: PORTAL_RESOURCE,
    });
    await waitFor(
      "the refresh to be recorded",
      async () => (await lastUsed()).lastUsedAt > before.lastUsedAt,
      5_000,
    );
    expect((await lastUsed()).clientAddress).toBe("127.0.0.1");
  });
});

describe("DELETE /api/v1/me/sessions/{id}", () => {
  it("ends the session: its token is refused on the next request on both Managers, its refresh token too; the current one stays", async () => {
    const account = await portal.account();
    const [current, other] = await Promise.all([portal.signIn(account), portal.signIn(account)]);
    expect(await portal.answer(other, replica.baseUrl)).toBe(200);
    const uid = await sessionUid(manager.sql, other);

    const response = await portal.request(current.accessToken, "DELETE", `/api/v1/me/sessions/${uid}`);
    expect(response.status).toBe(204);

    expect(await portal.answer(other, replica.baseUrl)).toBe(401);
    expect(await portal.answer(other)).toBe(401);
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: portal.client.clientId,
        refreshToken: other.refreshToken as string,
        resource: PORTAL_RESOURCE,
      }),
    ).rejects.toMatchObject({ code: "invalid_grant" });
    expect(await portal.answer(current, replica.baseUrl)).toBe(200);
    expect(await auditRows(manager.sql, account.accountId, "session.revoked")).toEqual([
      {
        result: "success",
        clientId: portal.client.clientId,
        details: { session: uid, sessions: [uid], grantsRevoked: 1, backchannelLogoutsQueued: 0 },
      },
    ]);
  });

  it("answers another account's session exactly like an unknown one, ends nothing, and audits the refusal", async () => {
    const [owner, intruder] = await Promise.all([portal.account(), portal.account()]);
    const [owned, attacker] = await Promise.all([portal.signIn(owner), portal.signIn(intruder)]);
    const uid = await sessionUid(manager.sql, owned);

    const foreign = await portal.request(attacker.accessToken, "DELETE", `/api/v1/me/sessions/${uid}`);
    const unknown = await portal.request(
      attacker.accessToken,
      "DELETE",
      "/api/v1/me/sessions/no-such-session",
    );
    const [foreignBody, unknownBody] = [await foreign.json(), await unknown.json()];
    expect([foreign.status, unknown.status]).toEqual([404, 404]);
    expect(foreignBody.code).toBe("session.not_found");
    expect({ ...foreignBody, requestId: "" }).toEqual({ ...unknownBody, requestId: "" });

    expect(await portal.answer(owned)).toBe(200);
    expect(
      (await auditRows(manager.sql, intruder.accountId, "session.revoked")).map((row) => row.result),
    ).toEqual(["failure", "failure"]);
  });

  it.each([["an id longer than 128 characters", "x".repeat(129)]])(
    "refuses %s with the validation envelope",
    async (_case, id) => {
      const tokens = await portal.signIn(await portal.account());
      const response = await portal.request(tokens.accessToken, "DELETE", `/api/v1/me/sessions/${id}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        code: "validation.failed",
        details: [{ path: "id", code: "validation.too_big" }],
      });
    },
  );
});

describe("POST /api/v1/me/sessions/revoke-others", () => {
  it("ends every other session of the account and only those", async () => {
    const [account, bystander] = await Promise.all([portal.account(), portal.account()]);
    const [current, untouched, ...others] = await Promise.all([
      portal.signIn(account),
      portal.signIn(bystander),
      portal.signIn(account),
      portal.signIn(account),
    ]);

    const response = await portal.request(current.accessToken, "POST", "/api/v1/me/sessions/revoke-others");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ sessionsEnded: 2, backchannelLogoutsQueued: 0 });
    for (const tokens of others) expect(await portal.answer(tokens, replica.baseUrl)).toBe(401);
    expect(await portal.answer(current, replica.baseUrl)).toBe(200);
    expect(await portal.answer(untouched)).toBe(200);
    expect(await auditRows(manager.sql, account.accountId, "session.others-revoked")).toHaveLength(1);
  });
});

describe("POST /api/v1/me/logout", () => {
  let standing: Promise<SignInResult>;
  beforeAll(() => {
    standing = portal.account().then((account) => portal.signIn(account));
  });

  async function twoSessions(): Promise<{ accountId: string; current: SignInResult; other: SignInResult }> {
    const account = await portal.account();
    const [current, other] = await Promise.all([portal.signIn(account), portal.signIn(account)]);
    return { accountId: account.accountId, current, other };
  }

  it("scope session ends the current session only", async () => {
    const { accountId, current, other } = await twoSessions();
    const response = await portal.request(current.accessToken, "POST", "/api/v1/me/logout", {
      scope: "session",
    });
    expect(await response.json()).toEqual({ sessionsEnded: 1, backchannelLogoutsQueued: 0 });
    expect(await portal.answer(current, replica.baseUrl)).toBe(401);
    expect(await portal.answer(other, replica.baseUrl)).toBe(200);
    expect((await auditRows(manager.sql, accountId, "session.logged-out"))[0]?.details).toMatchObject({
      scope: "session",
    });
  });

  it("scope account ends every session of the account", async () => {
    const { current, other } = await twoSessions();
    const response = await portal.request(current.accessToken, "POST", "/api/v1/me/logout", {
      scope: "account",
    });
    expect(await response.json()).toEqual({ sessionsEnded: 2, backchannelLogoutsQueued: 0 });
    expect(await portal.answer(current, replica.baseUrl)).toBe(401);
    expect(await portal.answer(other, replica.baseUrl)).toBe(401);
  });

  it.each([
    // zod reports a missing enum as a value outside it; the message says "required".
    ["no scope", {}, "validation.invalid_value"],
    ["an unknown scope", { scope: "browser" }, "validation.invalid_value"],
    ["a scope that is not a string", { scope: 1 }, "validation.invalid_value"],
  ])("refuses %s with the validation envelope and ends nothing", async (_case, body, code) => {
    const tokens = await standing;
    const response = await portal.request(tokens.accessToken, "POST", "/api/v1/me/logout", body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: "validation.failed",
      details: [{ path: "scope", code }],
    });
    expect(await portal.answer(tokens)).toBe(200);
  });
});
