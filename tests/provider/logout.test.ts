/**
 * Logout at the built-in provider (issue 12): RP-initiated logout through the confirmation page
 * ends the provider session, and the Manager refuses the session's access token on the next
 * request; without an id_token_hint the page asks too; and a client with a back-channel logout
 * URI is sent a signed logout token naming the session. A first-party client's hint that names
 * the browser's session and account ends it without the page (issue 37); every other logout asks.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  BrowserSession,
  endSessionUrl,
  finishAuthorization,
  parseForms,
  refresh,
  type SignInResult,
  startAuthorization,
} from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { waitFor } from "@tjm/devstack/services";
import { createLogger } from "@tjm/platform";
import { createRemoteJWKSet, decodeJwt, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";

let manager: TestManager;
/** The relying party's back-channel logout endpoint: every logout_token POSTed to it. */
let backchannel: Server;
let backchannelUrl: string;
const logoutTokens: string[] = [];

beforeAll(async () => {
  // The receiver listens on loopback, a private address the provider calls only when named.
  manager = await TestManager.start({ env: { PROVIDER_PRIVATE_NETWORK_HOSTS: "127.0.0.1" } });
  backchannel = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const token = new URLSearchParams(Buffer.concat(chunks).toString("utf8")).get("logout_token");
    if (req.method === "POST" && token !== null) logoutTokens.push(token);
    res.writeHead(200).end();
  });
  backchannel.listen(0, "127.0.0.1");
  await once(backchannel, "listening");
  backchannelUrl = `http://127.0.0.1:${(backchannel.address() as AddressInfo).port}/backchannel-logout`;
});
afterAll(async () => {
  backchannel?.closeAllConnections();
  backchannel?.close();
  await manager?.close();
});

/** The claims parameter asking for the session's sid in the ID token, as the Admin console does. */
const SID_CLAIM = JSON.stringify({ id_token: { sid: null } });

async function operatorSignedIn(
  client?: TestClient,
  options: { account?: TestAccount; idTokenNamesSession?: boolean; session?: BrowserSession } = {},
): Promise<{
  account: TestAccount;
  client: TestClient;
  tokens: SignInResult;
}> {
  const account = options.account ?? (await createTestAccount(manager.sql, { roles: ["operator"] }));
  const signingIn = client ?? (await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] }));
  const tokens = await signInAs(
    manager.issuerUrl,
    signingIn,
    account,
    RESOURCE,
    undefined,
    options.session,
    options.idTokenNamesSession ? { claims: SID_CLAIM } : {},
  );
  return { account, client: signingIn, tokens };
}

/** An operations request the token is checked on: 404 (no such job) when it stands. */
async function managerAnswer(accessToken: string): Promise<number> {
  const response = await manager.request(`/api/v1/operations/jobs/${crypto.randomUUID()}`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  await response.body?.cancel();
  return response.status;
}

interface ConfirmationPage {
  status: number;
  html: string;
  /** oidc-provider's own form, with its xsrf field. */
  form: ReturnType<typeof parseForms>[number] | undefined;
}

async function confirmationPage(session: BrowserSession, url: URL): Promise<ConfirmationPage> {
  const response = await session.fetch(url);
  const html = await response.text();
  const form = parseForms(html, url).find((candidate) => candidate.action.endsWith("/session/end/confirm"));
  return { status: response.status, html, form };
}

/** Clicks "yes": the page's button submits the provider's form with logout=yes. */
async function confirmLogout(session: BrowserSession, page: ConfirmationPage): Promise<Response> {
  const form = page.form as NonNullable<ConfirmationPage["form"]>;
  return session.fetch(form.action, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...form.fields, logout: "yes" }),
  });
}

async function liveSessions(sid: string): Promise<number> {
  const [row] = await manager.sql<{ n: number }[]>`
    select count(*)::int as n from oidc_records
    where model = 'Session' and sids @> array[${sid}::text] and (expires_at is null or expires_at > now())`;
  return row?.n ?? 0;
}

/** The provider's record of the grant the access token was issued under: 1 while it stands. */
async function grantRecords(tokens: SignInResult): Promise<number> {
  const [row] = await manager.sql<{ n: number }[]>`
    select count(*)::int as n from oidc_records
    where model = 'Grant' and id = ${tokens.claims.tjm_grant_id as string}`;
  return row?.n ?? 0;
}

/** Waits for the logout's audit row: one success, of this account, through this client. */
async function logoutAudited(accountId: string, clientId: string): Promise<void> {
  await waitFor("the logout's audit row", async () => {
    const rows = await manager.sql`
      select result, client_id from audit_events
      where event = 'auth.logout' and actor_account_id = ${accountId}`;
    if (rows.length === 0) return false;
    expect(rows).toEqual([{ result: "success", clientId }]);
    return true;
  });
}

describe("RP-initiated logout with an id_token_hint", () => {
  it("of a third-party client asks, though its hint names the session; yes ends it, and the Manager then refuses the session's access token", async () => {
    const thirdParty = await createTestClient(manager.sql, {
      resources: [OPERATIONS_AUDIENCE],
      firstParty: false,
    });
    const { account, client, tokens } = await operatorSignedIn(thirdParty, { idTokenNamesSession: true });
    const sid = tokens.claims.sid as string;
    expect(sid).toEqual(expect.any(String));
    expect(decodeJwt(tokens.idToken as string).sid).toBe(sid);
    expect(await managerAnswer(tokens.accessToken)).toBe(404);
    expect(await grantRecords(tokens)).toBe(1);

    const page = await confirmationPage(
      tokens.session,
      await endSessionUrl({
        issuer: manager.issuerUrl,
        clientId: client.clientId,
        idTokenHint: tokens.idToken,
      }),
    );
    expect(page.status).toBe(200);
    expect(page.form?.method).toBe("post");
    expect(page.form?.fields).toEqual({ xsrf: expect.any(String) });
    // The "yes" button sits outside the provider's form and submits it with logout=yes.
    expect(page.html).toMatch(/<button[^>]*form="op\.logoutForm"[^>]*name="logout"[^>]*value="yes"/);

    const confirmed = await confirmLogout(tokens.session, page);
    expect(confirmed.status).toBe(303);
    const done = await tokens.session.fetch(
      new URL(confirmed.headers.get("location") as string, manager.baseUrl),
    );
    expect(done.status).toBe(200);
    await done.body?.cancel();

    expect(await liveSessions(sid)).toBe(0);
    expect(await managerAnswer(tokens.accessToken)).toBe(401);
    // The session's grant went with it (a third-party client without offline_access has no
    // refresh token to show it by).
    expect(await grantRecords(tokens)).toBe(0);

    await logoutAudited(account.accountId, client.clientId);
  });

  it("refuses the confirmation posted from another browser: its xsrf value belongs to the session", async () => {
    const { tokens } = await operatorSignedIn();
    const page = await confirmationPage(
      tokens.session,
      await endSessionUrl({
        issuer: manager.issuerUrl,
        clientId: tokens.claims.client_id as string,
        idTokenHint: tokens.idToken,
      }),
    );
    const stranger = new BrowserSession();
    const forged = await confirmLogout(stranger, page);
    expect(forged.status).toBe(400);
    await forged.body?.cancel();
    expect(await liveSessions(tokens.claims.sid as string)).toBe(1);
  });
});

describe("RP-initiated logout with a first-party client's hint naming the browser's session", () => {
  const POST_LOGOUT_URI = "http://127.0.0.1:9/signed-out";

  async function firstPartyClient(): Promise<TestClient> {
    const client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
    await manager.sql`
      update oauth_clients set post_logout_redirect_uris = array[${POST_LOGOUT_URI}]
      where client_id = ${client.clientId}`;
    return client;
  }

  it("ends the session without asking: straight to the post-logout URI with its state, its grant revoked, one audit row", async () => {
    const { account, client, tokens } = await operatorSignedIn(await firstPartyClient(), {
      idTokenNamesSession: true,
    });
    const sid = tokens.claims.sid as string;
    // A console signed in for hours holds a refreshed ID token: it names the session too.
    const refreshed = await refresh({
      issuer: manager.issuerUrl,
      clientId: client.clientId,
      refreshToken: tokens.refreshToken as string,
      resource: RESOURCE,
    });
    expect(decodeJwt(refreshed.idToken as string).sid).toBe(sid);
    const ended = await tokens.session.fetch(
      await endSessionUrl({
        issuer: manager.issuerUrl,
        clientId: client.clientId,
        idTokenHint: refreshed.idToken,
        postLogoutRedirectUri: POST_LOGOUT_URI,
        state: "s-42",
      }),
    );
    await ended.body?.cancel();
    expect(ended.status).toBe(303);
    expect(ended.headers.get("location")).toBe(`${POST_LOGOUT_URI}?state=s-42`);
    expect(await liveSessions(sid)).toBe(0);
    expect(await managerAnswer(refreshed.accessToken)).toBe(401);
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: client.clientId,
        refreshToken: refreshed.refreshToken as string,
      }),
    ).rejects.toMatchObject({ code: "invalid_grant" });
    await logoutAudited(account.accountId, client.clientId);
  });

  it.each([
    ["names no session", "no sid"],
    ["names another session of the account", "another session"],
    ["is another account's", "another account"],
  ] as const)("asks when the hint %s", async (_, case_) => {
    const client = await firstPartyClient();
    const signedIn = await operatorSignedIn(client, { idTokenNamesSession: case_ !== "no sid" });
    const hint =
      case_ === "another session"
        ? await operatorSignedIn(client, { account: signedIn.account, idTokenNamesSession: true })
        : case_ === "another account"
          ? await operatorSignedIn(client, { idTokenNamesSession: true })
          : signedIn;
    const page = await confirmationPage(
      signedIn.tokens.session,
      await endSessionUrl({
        issuer: manager.issuerUrl,
        clientId: client.clientId,
        idTokenHint: hint.tokens.idToken,
        postLogoutRedirectUri: POST_LOGOUT_URI,
      }),
    );
    expect(page.status).toBe(200);
    expect(page.form?.fields).toEqual({ xsrf: expect.any(String) });
    expect(await liveSessions(signedIn.tokens.claims.sid as string)).toBe(1);
    expect(await managerAnswer(signedIn.tokens.accessToken)).toBe(404);
  });
});

describe("RP-initiated logout with a hint the provider did not sign", () => {
  it("is refused with the error page, and the session stays", async () => {
    const { client, tokens } = await operatorSignedIn(undefined, { idTokenNamesSession: true });
    const [header, payload, signature] = (tokens.idToken as string).split(".") as [string, string, string];
    const forged = `${header}.${payload}.${signature.startsWith("A") ? "B" : "A"}${signature.slice(1)}`;
    const response = await tokens.session.fetch(
      await endSessionUrl({ issuer: manager.issuerUrl, clientId: client.clientId, idTokenHint: forged }),
    );
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain("/session/end/confirm");
    expect(await liveSessions(tokens.claims.sid as string)).toBe(1);
  });
});

describe("RP-initiated logout without an id_token_hint", () => {
  it("shows the confirmation page, and unanswered it ends nothing", async () => {
    const { tokens } = await operatorSignedIn();
    const configuration = await fetch(`${manager.issuerUrl}/.well-known/openid-configuration`);
    const { end_session_endpoint } = (await configuration.json()) as { end_session_endpoint: string };

    const page = await confirmationPage(tokens.session, new URL(end_session_endpoint));
    expect(page.status).toBe(200);
    expect(page.form?.fields).toEqual({ xsrf: expect.any(String) });
    expect(await liveSessions(tokens.claims.sid as string)).toBe(1);
    expect(await managerAnswer(tokens.accessToken)).toBe(404);
  });
});

describe("back-channel logout", () => {
  it("POSTs the client a logout token, signed by the provider, naming the account and the session", async () => {
    const client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
    // Client management has no back-channel fields yet; the provider reads them from the row.
    await manager.sql`
      update oauth_clients
      set backchannel_logout_uri = ${backchannelUrl},
        metadata = metadata || '{"backchannel_logout_session_required": true}'
      where client_id = ${client.clientId}`;
    const { account, tokens } = await operatorSignedIn(client);
    const sid = tokens.claims.sid as string;
    const before = logoutTokens.length;

    // Its ID token names the session (sid), so its hint ends the session without the page.
    const ended = await tokens.session.fetch(
      await endSessionUrl({
        issuer: manager.issuerUrl,
        clientId: client.clientId,
        idTokenHint: tokens.idToken,
      }),
    );
    expect(ended.status).toBe(303);
    await ended.body?.cancel();
    await waitFor("the back-channel logout request", async () => logoutTokens.length > before, 5000);
    expect(logoutTokens).toHaveLength(before + 1);
    const { payload, protectedHeader } = await jwtVerify(
      logoutTokens[before] as string,
      createRemoteJWKSet(new URL(`${manager.issuerUrl}/jwks`)),
      { issuer: manager.issuerUrl, audience: client.clientId, typ: "logout+jwt", algorithms: ["RS256"] },
    );
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({
      sub: account.accountId,
      sid,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    });
    expect(payload.jti).toEqual(expect.any(String));
    expect(payload).not.toHaveProperty("nonce");
  });
});

describe("back-channel logout to a private address nobody named", () => {
  it("is not sent (the provider's SSRF guard), and the Manager says why", async () => {
    const lines: string[] = [];
    const guarded = await TestManager.start({ logger: createLogger("warn", (line) => lines.push(line)) });
    try {
      const client = await createTestClient(guarded.sql, { resources: [OPERATIONS_AUDIENCE] });
      await guarded.sql`update oauth_clients set backchannel_logout_uri = ${backchannelUrl}
                        where client_id = ${client.clientId}`;
      const account = await createTestAccount(guarded.sql, { roles: ["operator"] });
      const tokens = await signInAs(guarded.issuerUrl, client, account, RESOURCE);
      const before = logoutTokens.length;
      const ended = await tokens.session.fetch(
        await endSessionUrl({
          issuer: guarded.issuerUrl,
          clientId: client.clientId,
          idTokenHint: tokens.idToken,
        }),
      );
      expect(ended.status).toBe(303);
      await ended.body?.cancel();
      await waitFor("the undelivered logout's warning", async () =>
        lines.some((line) => line.includes("back-channel logout not delivered")),
      );
      expect(logoutTokens).toHaveLength(before);
      expect(lines.join("\n")).toContain("PROVIDER_PRIVATE_NETWORK_HOSTS");
    } finally {
      await guarded.close();
    }
  });
});

/** RP-initiated logout with an id_token_hint, confirmed on the provider's page. */
async function logOutWithHint(tokens: SignInResult, clientId: string): Promise<void> {
  const page = await confirmationPage(
    tokens.session,
    await endSessionUrl({ issuer: manager.issuerUrl, clientId, idTokenHint: tokens.idToken }),
  );
  const confirmed = await confirmLogout(tokens.session, page);
  expect(confirmed.status).toBe(303);
  await confirmed.body?.cancel();
}

describe("a refresh token asked for with offline_access and prompt=consent", () => {
  async function signedInOffline(firstParty: boolean) {
    const account = await createTestAccount(manager.sql, { roles: ["operator"] });
    const client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE], firstParty });
    const tokens = await finishAuthorization(
      await startAuthorization({
        issuer: manager.issuerUrl,
        clientId: client.clientId,
        redirectUri: client.redirectUri,
        resource: RESOURCE,
        scope: "openid offline_access",
        prompt: "consent",
      }),
      account,
    );
    expect(tokens.refreshToken).toEqual(expect.any(String));
    return { client, tokens };
  }

  it.each([
    ["a first-party client", true],
    ["a third-party client", false],
  ])(
    "of %s ends with the session: after logout it mints nothing, and what it minted before is refused",
    async (_, firstParty) => {
      const { client, tokens } = await signedInOffline(firstParty);
      const minted = await refresh({
        issuer: manager.issuerUrl,
        clientId: client.clientId,
        refreshToken: tokens.refreshToken as string,
        resource: RESOURCE,
      });
      expect(minted.claims.sid).toBe(tokens.claims.sid);
      expect(await managerAnswer(minted.accessToken)).toBe(404);

      await logOutWithHint(tokens, client.clientId);

      await expect(
        refresh({
          issuer: manager.issuerUrl,
          clientId: client.clientId,
          refreshToken: minted.refreshToken as string,
          resource: RESOURCE,
        }),
      ).rejects.toMatchObject({ code: "invalid_grant" });
      expect(await managerAnswer(minted.accessToken)).toBe(401);
      expect(await managerAnswer(tokens.accessToken)).toBe(401);
    },
  );
});
