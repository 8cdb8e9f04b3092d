/**
 * Who the Admin console signs in and what it offers each account (issue 21): every enabled
 * account signs in and gets an account-portal token; an operator also an operations token, a
 * client admin also an admin-console token, each refreshed with its own `resource`. The grant
 * and the tokens leave out what the account's roles do not allow, the pages and navigation
 * of operations are not offered without an operations token, and the proxy and the event
 * stream refuse such a session with 403. Real Manager, provider and console.
 */
import { type BrowserSession, OAuthError, refresh } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idHash } from "../../admin/src/sessions/store.ts";
import { type ConsoleResource, resourceIndicator } from "../../admin/src/sign-in/relying-party.ts";
import type { TestAccount } from "../harness/identity.ts";
import { type StoredSession, TestAdmin } from "./admin-harness.ts";

/** Inside the console's refresh margin (60 s before the access token expires). */
const INSIDE_REFRESH_MARGIN_SECONDS = 30;

const AUDIENCE: Record<ConsoleResource, string> = {
  "account-portal": "account-portal",
  operations: OPERATIONS_AUDIENCE,
  "admin-console": "admin-console",
};

let admin: TestAdmin;
beforeAll(async () => {
  admin = await TestAdmin.start();
});
afterAll(async () => {
  await admin?.close();
});

async function signedIn(
  roles: ("operator" | "client-admin")[],
): Promise<{ account: TestAccount; browser: BrowserSession; landedOn: string }> {
  const account = await admin.account(roles);
  const { browser, callback } = await admin.signIn(account);
  expect(callback.status).toBe(303);
  return { account, browser, landedOn: callback.headers.get("location") as string };
}

async function stored(browser: BrowserSession): Promise<StoredSession> {
  const session = await admin.storedSession(browser);
  if (session === undefined) throw new Error("the browser's console session is gone");
  return session;
}

/** Each held resource with its token's `aud` and `sub`. */
function audiencesOf(session: StoredSession): Record<string, { aud: unknown; sub: unknown }> {
  return Object.fromEntries(
    Object.entries(session.tokens.access).map(([resource, access]) => {
      const claims = decodeJwt(access.token);
      return [resource, { aud: claims.aud, sub: claims.sub }];
    }),
  );
}

function expectTokens(session: StoredSession, resources: ConsoleResource[], sub: string): void {
  expect(audiencesOf(session)).toEqual(
    Object.fromEntries(resources.map((resource) => [resource, { aud: AUDIENCE[resource], sub }])),
  );
}

/** The resources the provider's grant of this session holds, and those it recorded as rejected. */
async function grantOf(session: StoredSession): Promise<{ held: string[]; rejected: string[] }> {
  const [row] = await admin.manager.sql<
    { payload: { resources?: object; rejected?: { resources?: object } } }[]
  >`
    select payload from oidc_records where model = 'Grant' and id = (
      select grant_id from oidc_records where model = 'RefreshToken' and id = ${session.tokens.refreshToken as string})`;
  return {
    held: Object.keys(row?.payload.resources ?? {}).sort(),
    rejected: Object.keys(row?.payload.rejected?.resources ?? {}).sort(),
  };
}

async function accessExpiresIn(browser: BrowserSession, seconds: number): Promise<void> {
  await admin.sql`
    update admin_sessions set access_expires_at = now() + ${seconds} * interval '1 second'
    where id_hash = ${idHash(admin.cookieOf(browser) as string)}`;
}

async function page(
  browser: BrowserSession,
  path: string,
): Promise<{ status: number; location: string | null; html: string }> {
  const response = await browser.fetch(`${admin.baseUrl}${path}`, { redirect: "manual" });
  return { status: response.status, location: response.headers.get("location"), html: await response.text() };
}

const OPERATIONS_LINKS = ['href="/jobs"', 'href="/submit"', 'href="/workers"', 'href="/enrollment"'];

describe("an operator", () => {
  it("gets operations and account-portal tokens, not admin-console; the grant holds the same; operations work as before", async () => {
    const { account, browser } = await signedIn(["operator"]);
    const session = await stored(browser);
    expectTokens(session, ["account-portal", "operations"], account.accountId);
    const indicator = (resource: ConsoleResource) => resourceIndicator(AUDIENCE[resource]);
    expect(await grantOf(session)).toEqual({
      held: [indicator("account-portal"), indicator("operations")].sort(),
      rejected: [indicator("admin-console")],
    });
    expect((await admin.request(browser, "/api/operations/jobs?limit=1")).status).toBe(200);
    const jobs = await page(browser, "/jobs");
    expect(jobs.status).toBe(200);
    for (const link of OPERATIONS_LINKS) expect(jobs.html).toContain(link);
    expect((await page(browser, "/")).location).toBe("/jobs");
  });
});

describe("an account with no role", () => {
  it("signs in, gets only an account-portal token, and its grant holds nothing else", async () => {
    const { account, browser, landedOn } = await signedIn([]);
    expect(landedOn).toBe("/jobs");
    const session = await stored(browser);
    expectTokens(session, ["account-portal"], account.accountId);
    expect((await grantOf(session)).held).toEqual([resourceIndicator("account-portal")]);
  });

  it("is offered no operations page: each sends it to its account view, which says what it may do", async () => {
    const { account, browser } = await signedIn([]);
    for (const path of ["/jobs", "/submit", "/workers", "/enrollment", `/jobs/${crypto.randomUUID()}`, "/"]) {
      const answer = await page(browser, path);
      expect([path, answer.status, answer.location]).toEqual([path, 303, "/account"]);
    }
    const view = await page(browser, "/account");
    expect(view.status).toBe(200);
    expect(view.html).toContain(account.accountId);
    expect(view.html).toMatch(/Operations<\/strong> \(jobs, workers, enrollment tokens\) are not offered/);
    expect(view.html).toMatch(/Client administration<\/strong> is not offered/);
    for (const link of OPERATIONS_LINKS) expect(view.html).not.toContain(link);
    expect(view.html).toContain('href="/account"');
  });

  it("gets 403 in the console's error body from the proxy and the event stream, without the Manager being asked", async () => {
    const { browser } = await signedIn([]);
    const calls = [
      admin.request(browser, "/api/operations/jobs?limit=1"),
      admin.request(browser, "/api/operations/workers"),
      admin.request(browser, "/api/operations/enrollment-tokens", { method: "POST", body: {} }),
      admin.request(browser, "/api/events"),
    ];
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({
        statusCode: 403,
        error: "Forbidden",
        code: "auth.token_refused",
        message: expect.stringMatching(/operator role/),
        requestId: response.headers.get("x-request-id"),
      });
    }
    // Refused by the console, not by a Manager 401: the session stands.
    expect((await admin.request(browser, "/api/session")).status).toBe(200);
  });

  it("cannot get an operations token with the console's refresh token: invalid_target, and the refresh token still works", async () => {
    const { browser } = await signedIn([]);
    const { refreshToken } = (await stored(browser)).tokens;
    const asTheConsole = (resource: string, token: string) =>
      refresh({
        issuer: admin.manager.issuerUrl,
        clientId: admin.clientId,
        clientSecret: admin.clientSecret,
        refreshToken: token,
        resource,
      });
    for (const resource of ["operations", "admin-console"] as const) {
      const refused = await asTheConsole(resourceIndicator(AUDIENCE[resource]), refreshToken as string).catch(
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(OAuthError);
      expect((refused as OAuthError).code).toBe("invalid_target");
    }
    // Refused before rotation: the same refresh token still gets the account-portal token.
    const renewed = await asTheConsole(resourceIndicator("account-portal"), refreshToken as string);
    expect(renewed.claims.aud).toBe("account-portal");
  });
});

describe("a client admin", () => {
  it("gets admin-console and account-portal tokens, each refreshed with its own resource", async () => {
    const { account, browser } = await signedIn(["client-admin"]);
    const before = await stored(browser);
    expectTokens(before, ["account-portal", "admin-console"], account.accountId);
    const view = await page(browser, "/account");
    expect(view.html).toMatch(
      /<a href="\/clients">Client administration<\/a>: your account holds the client-admin role/,
    );
    for (const link of OPERATIONS_LINKS) expect(view.html).not.toContain(link);

    await accessExpiresIn(browser, INSIDE_REFRESH_MARGIN_SECONDS);
    expect((await admin.request(browser, "/api/session")).status).toBe(200);
    const after = await stored(browser);
    expectTokens(after, ["account-portal", "admin-console"], account.accountId);
    for (const resource of ["account-portal", "admin-console"] as const) {
      expect(decodeJwt(after.tokens.access[resource]?.token as string).jti).not.toBe(
        decodeJwt(before.tokens.access[resource]?.token as string).jti,
      );
    }
  });

  it("who is also an operator gets all three", async () => {
    const { account, browser } = await signedIn(["operator", "client-admin"]);
    expectTokens(await stored(browser), ["account-portal", "operations", "admin-console"], account.accountId);
  });
});

describe("an operator whose role is removed", () => {
  it("loses the operations token at the next refresh and keeps the session: operations are no longer offered", async () => {
    const { account, browser } = await signedIn(["operator"]);
    await admin.manager
      .sql`delete from account_roles where account_id = ${account.accountId} and role = 'operator'`;
    await accessExpiresIn(browser, INSIDE_REFRESH_MARGIN_SECONDS);
    const response = await admin.request(browser, "/api/operations/jobs?limit=1");
    expect(response.status).toBe(403);
    expectTokens(await stored(browser), ["account-portal"], account.accountId);
    expect((await page(browser, "/jobs")).location).toBe("/account");
  });
});

describe("a session sealed before the console kept a token per resource", () => {
  it("has ended: 401, the row gone, and signing in again works", async () => {
    const account = await admin.operator();
    const { browser } = await admin.signIn(account);
    const { tokens } = await stored(browser);
    await admin.replaceSealedTokens(browser, {
      accessToken: tokens.access.operations?.token,
      refreshToken: tokens.refreshToken,
      idToken: tokens.idToken,
      accessExpiresAt: tokens.access.operations?.expiresAt,
    });
    expect((await admin.request(browser, "/api/operations/jobs?limit=1")).status).toBe(401);
    expect(await admin.storedSession(browser)).toBeUndefined();
    const again = await admin.signIn(account, browser);
    expect(again.callback.status).toBe(303);
    expect((await admin.request(browser, "/api/operations/jobs?limit=1")).status).toBe(200);
  });
});
