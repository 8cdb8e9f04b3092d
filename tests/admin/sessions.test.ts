/**
 * The Admin console's session lifetimes (issue 13): the access token refreshed shortly before it
 * expires (the rotated refresh token kept, a refused refresh ending the session), the idle and
 * absolute timeouts, and two console processes on one schema sharing sessions and refreshing
 * once between them. Time is moved by SQL on the session's row, which is what every decision
 * is made from, so nothing waits real minutes.
 */
import { type BrowserSession, OAuthError, refresh } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { decodeJwt } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idHash } from "../../admin/src/sessions/store.ts";
import { firstExpiry, resourceIndicator } from "../../admin/src/sign-in/relying-party.ts";
import type { TestAccount } from "../harness/identity.ts";
import { type StoredSession, TestAdmin } from "./admin-harness.ts";

/** Inside the console's refresh margin (60 s before the access token expires). */
const INSIDE_REFRESH_MARGIN_SECONDS = 30;
/** How far the database's and this process's clocks may seem apart across a request. */
const CLOCK_SLACK_MS = 5_000;

let admin: TestAdmin;
beforeAll(async () => {
  admin = await TestAdmin.start();
});
afterAll(async () => {
  await admin?.close();
});

async function signedIn(): Promise<{ account: TestAccount; browser: BrowserSession }> {
  const account = await admin.operator();
  const { browser, callback } = await admin.signIn(account);
  expect(callback.status).toBe(303);
  return { account, browser };
}

function hashOf(browser: BrowserSession): Buffer {
  return idHash(admin.cookieOf(browser) as string);
}

async function stored(browser: BrowserSession): Promise<StoredSession> {
  const session = await admin.storedSession(browser);
  if (session === undefined) throw new Error("the browser's console session is gone");
  return session;
}

/** Brings the session's access token to `seconds` before its expiry, as time passing would. */
async function accessExpiresIn(browser: BrowserSession, seconds: number): Promise<void> {
  await admin.sql`
    update admin_sessions set access_expires_at = now() + ${seconds} * interval '1 second'
    where id_hash = ${hashOf(browser)}`;
}

/** The session's last request `minutes` ago. */
async function lastSeenAgo(browser: BrowserSession, minutes: number): Promise<void> {
  await admin.sql`
    update admin_sessions set last_seen_at = now() - ${minutes} * interval '1 minute'
    where id_hash = ${hashOf(browser)}`;
}

/** The session signed in `hours` ago (its absolute end moved with it), and active just now. */
async function signedInAgo(browser: BrowserSession, hours: number, absoluteHours = 12): Promise<void> {
  await admin.sql`
    update admin_sessions
    set created_at = now() - ${hours} * interval '1 hour',
        expires_at = now() - ${hours - absoluteHours} * interval '1 hour',
        last_seen_at = now()
    where id_hash = ${hashOf(browser)}`;
}

/**
 * Refresh tokens the provider issued in this refresh token's grant: one per token request (the
 * code's exchange, then each refresh, one per resource; rotation keeps the grant). An operator's
 * sign-in makes two (account-portal, then operations), each later refresh of both two more. A
 * reused refresh token would revoke the grant instead.
 */
async function refreshTokensInGrant(refreshToken: string): Promise<number> {
  const [row] = await admin.manager.sql<{ count: number }[]>`
    select count(*)::int as count from oidc_records
    where model = 'RefreshToken' and grant_id = (
      select grant_id from oidc_records where model = 'RefreshToken' and id = ${refreshToken})`;
  return row?.count ?? 0;
}

function jtiOf(accessToken: string): unknown {
  return decodeJwt(accessToken).jti;
}

function refreshAsTheConsole(refreshToken: string) {
  return refresh({
    issuer: admin.manager.issuerUrl,
    clientId: admin.clientId,
    clientSecret: admin.clientSecret,
    refreshToken,
    resource: resourceIndicator(OPERATIONS_AUDIENCE),
  });
}

async function revokeAsTheConsole(refreshToken: string): Promise<void> {
  const configuration = await oidc.discovery(
    new URL(admin.manager.issuerUrl),
    admin.clientId,
    undefined,
    oidc.ClientSecretBasic(admin.clientSecret),
    { execute: [oidc.allowInsecureRequests] },
  );
  await oidc.tokenRevocation(configuration, refreshToken, { token_type_hint: "refresh_token" });
}

async function expectEnded(browser: BrowserSession): Promise<void> {
  const response = await admin.request(browser, "/api/operations/jobs?limit=1");
  expect(response.status).toBe(401);
  expect(await response.json()).toStrictEqual({
    statusCode: 401,
    error: "Unauthorized",
    message: expect.any(String),
    code: "auth.session_missing",
    requestId: response.headers.get("x-request-id"),
  });
  expect(await admin.storedSession(browser)).toBeUndefined();
}

describe("the access token's refresh", () => {
  it("keeps a token with more than the margin left, without asking the provider", async () => {
    const { browser } = await signedIn();
    const before = await stored(browser);
    expect((await admin.request(browser, "/api/operations/jobs?limit=1")).status).toBe(200);
    const after = await stored(browser);
    expect(after.tokens).toEqual(before.tokens);
    expect(await refreshTokensInGrant(before.tokens.refreshToken as string)).toBe(2);
  });

  it("refreshes a token inside the margin on the next request, keeps the rotated refresh token, and the old one is refused", async () => {
    const { browser } = await signedIn();
    const before = await stored(browser);
    const oldRefreshToken = before.tokens.refreshToken as string;
    expect(oldRefreshToken).toEqual(expect.any(String));
    await accessExpiresIn(browser, INSIDE_REFRESH_MARGIN_SECONDS);

    const response = await admin.request(browser, "/api/operations/jobs?limit=1");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ items: expect.any(Array) });

    const after = await stored(browser);
    // Each token refreshed with its own resource: a new token, of its own audience.
    for (const [resource, audience] of [
      ["operations", OPERATIONS_AUDIENCE],
      ["account-portal", "account-portal"],
    ] as const) {
      const token = after.tokens.access[resource]?.token as string;
      expect(jtiOf(token)).toEqual(expect.any(String));
      expect(jtiOf(token)).not.toBe(jtiOf(before.tokens.access[resource]?.token as string));
      expect(decodeJwt(token).aud).toBe(audience);
    }
    expect(after.tokens.refreshToken).toEqual(expect.any(String));
    expect(after.tokens.refreshToken).not.toBe(oldRefreshToken);
    expect(after.accessExpiresAt.getTime()).toBeGreaterThan(Date.now() + 60_000);
    expect(after.accessExpiresAt.getTime()).toBe(firstExpiry(after.tokens));
    expect(await refreshTokensInGrant(after.tokens.refreshToken as string)).toBe(4);

    const replay = await refreshAsTheConsole(oldRefreshToken).catch((error: unknown) => error);
    expect(replay).toBeInstanceOf(OAuthError);
    expect((replay as OAuthError).code).toBe("invalid_grant");
  });

  it.each([
    {
      refusal: "the account was disabled",
      refuse: async (account: TestAccount) => {
        await admin.manager.sql`update accounts set disabled_at = now() where id = ${account.accountId}`;
      },
    },
    {
      refusal: "the refresh token was revoked",
      refuse: async (_account: TestAccount, session: StoredSession) => {
        await revokeAsTheConsole(session.tokens.refreshToken as string);
      },
    },
  ])(
    "ends the session when the provider refuses the refresh ($refusal): 401 and the row gone",
    async ({ refuse }) => {
      const { account, browser } = await signedIn();
      expect((await admin.request(browser, "/api/session")).status).toBe(200);
      await refuse(account, await stored(browser));
      await accessExpiresIn(browser, INSIDE_REFRESH_MARGIN_SECONDS);
      await expectEnded(browser);
    },
  );
});

describe("the idle timeout", () => {
  it("ends a session without a request for longer than 30 minutes (the default): 401 and the row gone", async () => {
    const { browser } = await signedIn();
    await lastSeenAgo(browser, 31);
    await expectEnded(browser);
  });

  it("keeps a session whose last request is just inside 30 minutes, and moves last_seen", async () => {
    const { browser } = await signedIn();
    await lastSeenAgo(browser, 29);
    expect((await stored(browser)).lastSeenAt.getTime()).toBeLessThan(Date.now() - 28 * 60_000);
    expect((await admin.request(browser, "/api/operations/jobs?limit=1")).status).toBe(200);
    expect((await stored(browser)).lastSeenAt.getTime()).toBeGreaterThan(Date.now() - CLOCK_SLACK_MS);
  });

  it("follows ADMIN_SESSION_IDLE_MINUTES: 6 minutes idle is fine at 30, the end at 5", async () => {
    const strict = await admin.startInstance({ idleMinutes: 5 });
    const { browser } = await signedIn();
    await lastSeenAgo(browser, 6);
    expect((await admin.request(browser, "/api/session")).status).toBe(200);
    await lastSeenAgo(browser, 6);
    expect((await strict.request(browser, "/api/session")).status).toBe(401);
    expect(await admin.storedSession(browser)).toBeUndefined();
  });
});

describe("the absolute timeout", () => {
  it("sets a session's end 12 hours (the default) after its sign-in", async () => {
    const { browser } = await signedIn();
    const session = await stored(browser);
    const lifetimeMs = session.expiresAt.getTime() - session.createdAt.getTime();
    expect(Math.abs(lifetimeMs - 12 * 3_600_000)).toBeLessThan(CLOCK_SLACK_MS);
  });

  it("keeps a session just inside 12 hours", async () => {
    const { browser } = await signedIn();
    await signedInAgo(browser, 11.9);
    expect((await admin.request(browser, "/api/operations/jobs?limit=1")).status).toBe(200);
    expect(await admin.storedSession(browser)).toBeDefined();
  });

  it("ends a session older than 12 hours even though it was active a moment ago: 401 and the row gone", async () => {
    const { browser } = await signedIn();
    await signedInAgo(browser, 12.1);
    expect((await stored(browser)).lastSeenAt.getTime()).toBeGreaterThan(Date.now() - CLOCK_SLACK_MS);
    await expectEnded(browser);
  });
});

describe("two console processes on one schema", () => {
  it("serves a session created by one from the other", async () => {
    const other = await admin.startInstance();
    const { account, browser } = await signedIn();
    const response = await other.request(browser, "/api/session");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ signedIn: true, sub: account.accountId });
    expect((await other.request(browser, "/api/operations/jobs?limit=1")).status).toBe(200);
  });

  it("uses the other's refresh: the second process takes the stored tokens and does not refresh again", async () => {
    const other = await admin.startInstance();
    const { browser } = await signedIn();
    await accessExpiresIn(browser, INSIDE_REFRESH_MARGIN_SECONDS);
    expect((await admin.request(browser, "/api/operations/jobs?limit=1")).status).toBe(200);
    const refreshed = await stored(browser);

    expect((await other.request(browser, "/api/operations/jobs?limit=1")).status).toBe(200);
    expect((await stored(browser)).tokens).toEqual(refreshed.tokens);
    expect(await refreshTokensInGrant(refreshed.tokens.refreshToken as string)).toBe(4);
  });

  it("refreshes once when both get requests at the margin at the same time (the row lock)", async () => {
    const other = await admin.startInstance();
    const { browser } = await signedIn();
    const before = await stored(browser);
    const atOnce = async (path: string) =>
      Promise.all(
        Array.from({ length: 8 }, async (_, n) => {
          const response = await (n % 2 === 0 ? admin : other).request(browser, path);
          await response.body?.cancel();
          return response.status;
        }),
      );
    // Open both processes' database connections first, so that the requests below reach the
    // session's row together rather than one by one as connections open.
    expect(await atOnce("/api/session")).toEqual(Array(8).fill(200));
    await accessExpiresIn(browser, INSIDE_REFRESH_MARGIN_SECONDS);

    expect(await atOnce("/api/operations/jobs?limit=1")).toEqual(Array(8).fill(200));

    const after = await stored(browser);
    expect(after.tokens.refreshToken).not.toBe(before.tokens.refreshToken);
    expect(jtiOf(after.tokens.access.operations?.token as string)).not.toBe(
      jtiOf(before.tokens.access.operations?.token as string),
    );
    // Two refreshes would show as six tokens, or (the second spending a used token) as a
    // revoked grant and a session ended.
    expect(await refreshTokensInGrant(after.tokens.refreshToken as string)).toBe(4);
  });
});
