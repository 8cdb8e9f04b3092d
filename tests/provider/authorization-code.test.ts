/**
 * The provider's authorization codes (issue 12, security tests): a code works once and for at
 * most 60 s, PKCE is S256 and required at both ends, and a redirect URI must match the
 * registered one exactly — a mismatch gets the provider's error page, never a redirect.
 */
import { createHash, randomBytes } from "node:crypto";
import { BrowserSession, type PendingAuthorization, startAuthorization } from "@tjm/devstack/oidc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  TEST_REDIRECT_URI,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { authorizationRequest, callbackAfterSignIn, codeOf, tokenRequest } from "./provider-requests.ts";

const RESOURCE = resourceIndicator(ACCOUNT_PORTAL_AUDIENCE);

const randomVerifier = () => randomBytes(32).toString("base64url");
const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

let manager: TestManager;
let client: TestClient;
let account: TestAccount;

beforeAll(async () => {
  manager = await TestManager.start();
  client = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
  account = await createTestAccount(manager.sql);
});
afterAll(() => manager?.close());

function start(): Promise<PendingAuthorization> {
  return startAuthorization({
    issuer: manager.issuerUrl,
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    resource: RESOURCE,
    scope: "openid offline_access",
  });
}

/** A fresh code (not exchanged) and the verifier that goes with it. */
async function freshCode(): Promise<{ code: string; codeVerifier: string }> {
  const pending = await start();
  return { code: codeOf(await callbackAfterSignIn(pending, account)), codeVerifier: pending.codeVerifier };
}

function exchange(code: string, fields: Record<string, string>) {
  return tokenRequest(manager.issuerUrl, {
    grant_type: "authorization_code",
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    resource: RESOURCE,
    code,
    ...fields,
  });
}

describe("an authorization code", () => {
  it("works once: a second exchange is invalid_grant and revokes what the first one issued", async () => {
    const { code, codeVerifier } = await freshCode();
    const first = await exchange(code, { code_verifier: codeVerifier });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: "Bearer" });
    const refreshToken = first.body.refresh_token as string;
    expect(refreshToken).toEqual(expect.any(String));

    const second = await exchange(code, { code_verifier: codeVerifier });
    expect(second).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // RFC 6749 §4.1.2: a code used twice revokes the tokens already issued from it.
    const refreshed = await tokenRequest(manager.issuerUrl, {
      grant_type: "refresh_token",
      client_id: client.clientId,
      refresh_token: refreshToken,
    });
    expect(refreshed).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });

  it("works once even when exchanged by several requests at the same moment", async () => {
    const { code, codeVerifier } = await freshCode();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => exchange(code, { code_verifier: codeVerifier })),
    );
    expect(answers.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(1);
    for (const answer of answers.filter((candidate) => candidate.status !== 200)) {
      expect(answer).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    }
  });

  it("lives at most 60 s, and past its expiry is refused", async () => {
    const { code, codeVerifier } = await freshCode();
    const [stored] = await manager.sql<{ seconds: number }[]>`
      select extract(epoch from expires_at - now())::float8 as seconds
      from oidc_records where model = 'AuthorizationCode' and id = ${code}`;
    expect(stored?.seconds).toBeGreaterThan(50);
    expect(stored?.seconds).toBeLessThanOrEqual(60);

    // As if the minute had passed: the adapter looks codes up with expires_at > now().
    await manager.sql`
      update oidc_records set expires_at = now() - interval '1 second'
      where model = 'AuthorizationCode' and id = ${code}`;
    expect(await exchange(code, { code_verifier: codeVerifier })).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
  });

  it("is refused without the code_verifier, and with a wrong one", async () => {
    const { code, codeVerifier } = await freshCode();
    expect(await exchange(code, {})).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(await exchange(code, { code_verifier: randomVerifier() })).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    // Neither refusal used the code up: it still works for the holder of the verifier.
    expect((await exchange(code, { code_verifier: codeVerifier })).status).toBe(200);
  });

  it("is refused for another redirect_uri than the one it was issued for", async () => {
    const { code, codeVerifier } = await freshCode();
    expect(
      await exchange(code, { code_verifier: codeVerifier, redirect_uri: `${TEST_REDIRECT_URI}/` }),
    ).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });
});

describe("the authorization request", () => {
  /** A request as the client builds it, with S256 PKCE, before a case changes a parameter. */
  function parameters(changes: Record<string, string | undefined>): Record<string, string> {
    const all: Record<string, string | undefined> = {
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      response_type: "code",
      scope: "openid",
      resource: RESOURCE,
      state: crypto.randomUUID(),
      code_challenge: s256(randomVerifier()),
      code_challenge_method: "S256",
      ...changes,
    };
    return Object.fromEntries(
      Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
  }

  async function authorize(changes: Record<string, string | undefined>) {
    const session = new BrowserSession();
    return session.fetch(authorizationRequest(manager.issuerUrl, parameters(changes)));
  }

  it("as the client builds it reaches the sign-in page (the cases below change one thing)", async () => {
    const response = await authorize({});
    expect(response.status).toBe(303);
    expect(new URL(response.headers.get("location") as string, manager.baseUrl).pathname).toMatch(
      /^\/oidc\/interaction\//,
    );
  });

  it.each([
    [
      "signed out everywhere since its sign-in",
      "update accounts set tokens_valid_after = now() + interval '1 hour'",
    ],
    ["disabled since", "update accounts set disabled_at = now()"],
  ])(
    "of a browser whose session's account was %s asks for a sign-in again (was a 500)",
    async (_case, change) => {
      const changed = await createTestAccount(manager.sql);
      const pending = await start();
      codeOf(await callbackAfterSignIn(pending, changed));
      await manager.sql.unsafe(`${change} where id = $1`, [changed.accountId]);
      const response = await pending.session.fetch(authorizationRequest(manager.issuerUrl, parameters({})));
      expect(response.status).toBe(303);
      expect(new URL(response.headers.get("location") as string, manager.baseUrl).pathname).toMatch(
        /^\/oidc\/interaction\//,
      );
    },
  );

  it.each([
    ["PKCE plain", { code_challenge: randomVerifier(), code_challenge_method: "plain" }],
    ["no code_challenge", { code_challenge: undefined, code_challenge_method: undefined }],
    ["a code_challenge without its method", { code_challenge_method: undefined }],
  ])("with %s is refused back to the client with invalid_request", async (_case, changes) => {
    const response = await authorize(changes);
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get("location") as string);
    expect(`${location.origin}${location.pathname}`).toBe(TEST_REDIRECT_URI);
    expect(location.searchParams.get("error")).toBe("invalid_request");
    expect(location.searchParams.get("code")).toBeNull();
  });

  it.each([
    ["a trailing slash", `${TEST_REDIRECT_URI}/`],
    ["an extra query", `${TEST_REDIRECT_URI}?next=/admin`],
    ["another path", `${TEST_REDIRECT_URI}-evil`],
    ["another port", TEST_REDIRECT_URI.replace(":9/", ":10/")],
    ["another case", TEST_REDIRECT_URI.replace("callback", "Callback")],
    ["a fragment", `${TEST_REDIRECT_URI}#x`],
  ])("with %s in the redirect_uri gets the provider's error page, never a redirect", async (_case, uri) => {
    const response = await authorize({ redirect_uri: uri });
    expect(response.headers.get("location")).toBeNull();
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(await response.text()).toContain("redirect_uri");
  });
});
