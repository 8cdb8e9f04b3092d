/**
 * The headless client against a stand-in for TJM's provider: a real oidc-provider whose
 * interaction pages follow the contract the client expects (login form with email and
 * password, an alert on a wrong password, a consent form with decision=allow|deny). The
 * end-to-end test against the Manager's own provider lives with the Manager's tests.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  BrowserSession,
  finishAuthorization,
  OAuthError,
  refresh,
  signIn,
  startAuthorization,
} from "@tjm/devstack/oidc-client";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const EMAIL = "operator@example.com";
const PASSWORD = "correct horse battery staple";
const RESOURCE = "https://tjm.example.test/api";
// Port 9 (discard) is never listened on here: fetching the redirect URI would fail the test.
const REDIRECT_URI = "http://127.0.0.1:9/callback";
const CLIENT_ID = "test-client";
const CLIENT_SECRET = randomBytes(32).toString("base64url");

let provider: Provider;
let replicas: Server[] = [];
let issuer: string;
let secondReplica: string;

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

function loginPage(uid: string, problem?: string): string {
  return `<!doctype html><main><h1>Sign in</h1>
    ${problem ? `<div role="alert"><p>${escapeHtml(problem)}</p></div>` : ""}
    <form method="post" action="${escapeHtml(`/interaction/${uid}/login?via=form&step=1`)}">
      <input type="email" name="email"><input type="password" name="password">
      <button type="submit">Sign in</button>
    </form></main>`;
}

function consentPage(uid: string): string {
  return `<!doctype html><main><h1>Allow access?</h1>
    <form method="post" action="/interaction/${uid}/confirm">
      <input type="hidden" name="uid" value="${uid}">
      <button type="submit" name="decision" value="allow">Allow</button>
      <button type="submit" name="decision" value="deny">Deny</button>
    </form></main>`;
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function sendHtml(res: ServerResponse, status: number, html: string) {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(html);
}

async function interaction(req: IncomingMessage, res: ServerResponse) {
  const details = await provider.interactionDetails(req, res);
  const action = new URL(req.url ?? "/", "http://x").pathname.split("/")[3];
  if (req.method === "GET") {
    sendHtml(res, 200, details.prompt.name === "login" ? loginPage(details.uid) : consentPage(details.uid));
  } else if (action === "login") {
    const body = await formBody(req);
    if (body.get("email") !== EMAIL || body.get("password") !== PASSWORD) {
      sendHtml(res, 200, loginPage(details.uid, "Wrong e-mail address or password."));
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: EMAIL } },
      { mergeWithLastSubmission: false },
    );
  } else if ((await formBody(req)).get("decision") !== "allow") {
    await provider.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: "the user said no" },
      { mergeWithLastSubmission: false },
    );
  } else {
    const grant = new provider.Grant({ accountId: details.session?.accountId, clientId: CLIENT_ID });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
}

function route(): (req: IncomingMessage, res: ServerResponse) => void {
  const callback = provider.callback();
  return (req, res) => {
    if (req.url?.startsWith("/interaction/")) {
      interaction(req, res).catch((error: Error) => sendHtml(res, 500, error.message));
    } else callback(req, res);
  };
}

async function listening(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

const originOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

beforeAll(async () => {
  // Two listeners on one provider and its memory: replicas sharing their storage.
  replicas = [await listening(), await listening()];
  issuer = originOf(replicas[0] as Server);
  secondReplica = originOf(replicas[1] as Server);
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "stand-in", alg: "RS256", use: "sig" }] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    findAccount: (_ctx, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 300, RefreshToken: 3600, IdToken: 300 },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        getResourceServerInfo: () => ({ scope: "api:read", accessTokenFormat: "jwt", accessTokenTTL: 300 }),
      },
    },
  });
  const handler = route();
  for (const server of replicas) server.on("request", handler);
});
afterAll(async () => {
  for (const server of replicas) {
    server.closeAllConnections();
    server.close();
  }
});

const withIssuer = () => ({
  issuer,
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  redirectUri: REDIRECT_URI,
});

describe("signIn", () => {
  it("signs in through the login and consent pages and gets a JWT for the resource", async () => {
    const requests: string[] = [];
    const result = await signIn({
      ...withIssuer(),
      email: EMAIL,
      password: PASSWORD,
      scope: "openid api:read",
      resource: RESOURCE,
      onRequest: (method, url) => requests.push(`${method} ${new URL(url).pathname}`),
    });
    expect(result.claims).toMatchObject({ iss: issuer, aud: RESOURCE, sub: EMAIL, scope: "api:read" });
    expect(result.idToken).toBeDefined();
    expect(result.refreshToken).toBeDefined();
    expect(result.roundTrips).toBe(requests.length);
    expect(requests[0]).toBe("GET /.well-known/openid-configuration");
    expect(requests.filter((request) => request.startsWith("POST /interaction/"))).toHaveLength(2);
    expect(requests.at(-1)).toBe("POST /token");
  });

  it("signs in again with the same session without a form: the provider remembers it", async () => {
    const first = await signIn({ ...withIssuer(), email: EMAIL, password: PASSWORD });
    const pending = await startAuthorization({ ...withIssuer(), session: first.session });
    expect(pending.page).toBeUndefined();
    const again = await finishAuthorization(pending, { email: "unused", password: "unused" });
    expect(again.accessToken).not.toBe(first.accessToken);
    expect(again.claims).toEqual({});
  });

  it("reports a wrong password with the page's alert", async () => {
    await expect(signIn({ ...withIssuer(), email: EMAIL, password: "wrong" })).rejects.toThrow(
      "sign-in refused: Wrong e-mail address or password.",
    );
  });

  it("reports a denied consent as the provider's access_denied", async () => {
    const denied = signIn({ ...withIssuer(), email: EMAIL, password: PASSWORD, consent: "deny" });
    await expect(denied).rejects.toBeInstanceOf(OAuthError);
    await expect(denied).rejects.toMatchObject({ code: "access_denied", description: "the user said no" });
  });

  it("reports an authorization request the provider refuses with its status and page", async () => {
    const refused = signIn({
      ...withIssuer(),
      redirectUri: "http://127.0.0.1:9/other",
      email: EMAIL,
      password: PASSWORD,
    });
    await expect(refused).rejects.toThrow(
      /the authorization request failed: HTTP 400 from http:\/\/127\.0\.0\.1:\d+\/auth/,
    );
  });

  it("finishes on a second replica a sign-in started on the first, with one session", async () => {
    const visited: string[] = [];
    const pending = await startAuthorization({
      ...withIssuer(),
      session: new BrowserSession(),
      onRequest: (_method, url) => visited.push(url),
    });
    expect(pending.page?.url.origin).toBe(issuer);
    visited.length = 0;
    const result = await finishAuthorization(pending, {
      email: EMAIL,
      password: PASSWORD,
      providerOrigin: secondReplica,
    });
    expect(result.idToken).toBeDefined();
    const provider = visited.filter((url) => !url.endsWith("/token"));
    expect(provider.length).toBeGreaterThanOrEqual(4);
    for (const url of provider) expect(new URL(url).origin).toBe(secondReplica);
  });
});

describe("refresh", () => {
  it("exchanges a refresh token for a new access token for the resource", async () => {
    const first = await signIn({
      ...withIssuer(),
      email: EMAIL,
      password: PASSWORD,
      scope: "openid api:read",
      resource: RESOURCE,
    });
    const renewed = await refresh({
      ...withIssuer(),
      refreshToken: first.refreshToken as string,
      resource: RESOURCE,
    });
    expect(renewed.accessToken).not.toBe(first.accessToken);
    expect(renewed.claims).toMatchObject({ aud: RESOURCE, sub: EMAIL });
  });

  it("carries the OAuth error code of a refused refresh", async () => {
    await expect(refresh({ ...withIssuer(), refreshToken: "not-a-token" })).rejects.toMatchObject({
      code: "invalid_grant",
    });
  });
});
