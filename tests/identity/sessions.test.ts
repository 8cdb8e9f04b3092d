/**
 * Ending an account's provider sessions from the identity domain (identity/sessions/): what ends
 * is refused at once — its access tokens by the Manager's standing check (401), its refresh
 * tokens by the provider (invalid_grant) — and nothing else does: another session of the
 * account, the session kept by "all but one", another client of the same session.
 */
import { refresh, type SignInResult, type Tokens } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClientAuthorizationNotFoundError,
  endAllSessions,
  endClientAuthorization,
  endOtherSessions,
  endSession,
  listGrants,
  listSessions,
  SessionNotFoundError,
} from "../../manager/src/identity/sessions/index.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const RESOURCE = resourceIndicator(OPERATIONS_AUDIENCE);

let manager: TestManager;
let client: TestClient;

beforeAll(async () => {
  manager = await TestManager.start();
  client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
});
afterAll(() => manager?.close());

function operator(): Promise<TestAccount> {
  return createTestAccount(manager.sql, { roles: ["operator"] });
}

/** A sign-in in a browser of its own: a provider session of its own. */
function signedIn(account: TestAccount, signingIn = client, browser?: SignInResult): Promise<SignInResult> {
  return signInAs(manager.issuerUrl, signingIn, account, RESOURCE, "openid", browser?.session);
}

/** The uid of the provider session a token's sid belongs to (how the portal names a session). */
async function sessionUid(tokens: SignInResult): Promise<string> {
  const [row] = await manager.sql<{ uid: string }[]>`
    select uid from oidc_records where model = 'Session' and sids @> array[${tokens.claims.sid as string}::text]`;
  return (row as { uid: string }).uid;
}

/** An operations request the token is checked on: 404 (no such job) while it stands, 401 once refused. */
async function managerAnswer(tokens: Tokens): Promise<number> {
  const response = await manager.request(`/api/v1/operations/jobs/${crypto.randomUUID()}`, {
    headers: { authorization: `Bearer ${tokens.accessToken}` },
  });
  await response.body?.cancel();
  return response.status;
}

function refreshed(tokens: SignInResult, signingIn = client) {
  return refresh({
    issuer: manager.issuerUrl,
    clientId: signingIn.clientId,
    refreshToken: tokens.refreshToken as string,
    resource: RESOURCE,
  });
}

describe("listing an account's sessions and grants", () => {
  it("lists each live session with its clients' sids and grants and the browser holding it", async () => {
    const account = await operator();
    const tokens = await signedIn(account);
    const [session, ...others] = await listSessions(manager.sql, account.accountId);
    expect(others).toEqual([]);
    expect(session).toMatchObject({
      uid: await sessionUid(tokens),
      signedInAt: expect.any(Date),
      lastUsedAt: expect.any(Date),
      expiresAt: expect.any(Date),
      clients: [{ clientId: client.clientId, sid: tokens.claims.sid, grantId: tokens.claims.tjm_grant_id }],
      browser: { id: expect.any(String), rememberedAt: expect.any(Date), lastSeenAt: expect.any(Date) },
    });
    expect(await listGrants(manager.sql, account.accountId)).toEqual([
      {
        clientId: client.clientId,
        grants: [
          {
            grantId: tokens.claims.tjm_grant_id,
            grantedAt: expect.any(Date),
            expiresAt: expect.any(Date),
            scopes: { openid: ["openid"], resources: { [RESOURCE]: ["access"] } },
          },
        ],
      },
    ]);
  });
});

describe("ending one session", () => {
  it("refuses its access and refresh tokens while the account's other session keeps working", async () => {
    const account = await operator();
    const ending = await signedIn(account);
    const other = await signedIn(account);
    const uid = await sessionUid(ending);

    const ended = await endSession(manager.sql, account.accountId, uid);
    expect(ended).toEqual({
      sessions: [
        {
          uid,
          clients: [
            { clientId: client.clientId, sid: ending.claims.sid, grantId: ending.claims.tjm_grant_id },
          ],
        },
      ],
      grantIds: [ending.claims.tjm_grant_id],
      logoutsQueued: 0,
    });

    expect(await managerAnswer(ending)).toBe(401);
    await expect(refreshed(ending)).rejects.toMatchObject({ code: "invalid_grant" });
    expect(await manager.sql`select from browser_sessions where session_uid = ${uid}`).toHaveLength(0);

    expect(await managerAnswer(other)).toBe(404);
    const renewed = await refreshed(other);
    expect(await managerAnswer(renewed)).toBe(404);
    expect((await listSessions(manager.sql, account.accountId)).map((session) => session.uid)).toEqual([
      await sessionUid(other),
    ]);
  });

  it("answers a session of another account as one that does not exist, and ends nothing", async () => {
    const owner = await operator();
    const stranger = await operator();
    const tokens = await signedIn(owner);
    const uid = await sessionUid(tokens);

    await expect(endSession(manager.sql, stranger.accountId, uid)).rejects.toBeInstanceOf(
      SessionNotFoundError,
    );
    await expect(endSession(manager.sql, stranger.accountId, "no-such-session")).rejects.toBeInstanceOf(
      SessionNotFoundError,
    );

    expect(await managerAnswer(tokens)).toBe(404);
    expect(await listSessions(manager.sql, owner.accountId)).toHaveLength(1);
    expect(await manager.sql`select from browser_sessions where session_uid = ${uid}`).toHaveLength(1);
  });
});

describe("ending all sessions but one", () => {
  it("keeps the current session and ends every other", async () => {
    const account = await operator();
    const current = await signedIn(account);
    const others = [await signedIn(account), await signedIn(account)];

    const ended = await endOtherSessions(manager.sql, account.accountId, await sessionUid(current));
    expect(ended.sessions).toHaveLength(2);

    expect(await managerAnswer(current)).toBe(404);
    expect(await managerAnswer(await refreshed(current))).toBe(404);
    for (const other of others) {
      expect(await managerAnswer(other)).toBe(401);
      await expect(refreshed(other)).rejects.toMatchObject({ code: "invalid_grant" });
    }
    expect(await listSessions(manager.sql, account.accountId)).toHaveLength(1);
  });
});

describe("ending all of an account's sessions", () => {
  it("ends every one, forgets them in the browsers, and leaves other accounts signed in", async () => {
    const account = await operator();
    const bystander = await operator();
    const sessions = [await signedIn(account), await signedIn(account)];
    const untouched = await signedIn(bystander);
    const uids = await Promise.all(sessions.map(sessionUid));

    const ended = await endAllSessions(manager.sql, account.accountId);
    expect(ended.sessions.map((session) => session.uid).sort()).toEqual(uids.sort());
    for (const tokens of sessions) expect(await managerAnswer(tokens)).toBe(401);
    expect(await listSessions(manager.sql, account.accountId)).toEqual([]);
    expect(
      await manager.sql`select from browser_sessions where account_id = ${account.accountId}`,
    ).toHaveLength(0);
    expect(await managerAnswer(untouched)).toBe(404);
  });
});

describe("ending one client's part of an account's sessions", () => {
  it("ends only that client's tokens; the session and its other clients stay", async () => {
    const account = await operator();
    const other = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
    const revoked = await signedIn(account);
    // The same browser signs in to the other client: one session, two authorizations.
    const kept = await signedIn(account, other, revoked);
    const uid = await sessionUid(revoked);
    expect(await sessionUid(kept)).toBe(uid);

    const ended = await endClientAuthorization(manager.sql, account.accountId, client.clientId);
    expect(ended.sessions).toEqual([
      {
        uid,
        clients: [
          { clientId: client.clientId, sid: revoked.claims.sid, grantId: revoked.claims.tjm_grant_id },
        ],
      },
    ]);

    expect(await managerAnswer(revoked)).toBe(401);
    await expect(refreshed(revoked)).rejects.toMatchObject({ code: "invalid_grant" });
    expect(await managerAnswer(kept)).toBe(404);
    expect(await managerAnswer(await refreshed(kept, other))).toBe(404);

    const [session] = await listSessions(manager.sql, account.accountId);
    expect(session?.uid).toBe(uid);
    expect(session?.clients.map((signedInTo) => signedInTo.clientId)).toEqual([other.clientId]);
    expect((await listGrants(manager.sql, account.accountId)).map((grants) => grants.clientId)).toEqual([
      other.clientId,
    ]);
    // Nothing left to revoke: like a client that was never connected.
    await expect(
      endClientAuthorization(manager.sql, account.accountId, client.clientId),
    ).rejects.toBeInstanceOf(ClientAuthorizationNotFoundError);
  });
});
