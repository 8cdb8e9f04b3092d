/**
 * Access tokens end with their grant: when the provider revokes a grant — an authorization code
 * exchanged twice, a rotated refresh token used again — every access token already issued under
 * it is refused by every Manager replica on its next request, not when it expires (JWT access
 * tokens cannot be revoked at the provider; the Manager's per-request standing check does it).
 */
import { startAuthorization } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { callbackAfterSignIn, codeOf, tokenRequest } from "./provider-requests.ts";

const RESOURCE = resourceIndicator(OPERATIONS_AUDIENCE);

let first: TestManager;
let second: TestManager;
let client: TestClient;
let account: TestAccount;

beforeAll(async () => {
  first = await TestManager.start();
  second = await TestManager.start({ schema: first.schema, env: { OIDC_ISSUER_URL: first.issuerUrl } });
  client = await createTestClient(first.sql, { resources: [OPERATIONS_AUDIENCE] });
  account = await createTestAccount(first.sql, { roles: ["operator"] });
});
afterAll(async () => {
  await second?.close({ keepStreams: true });
  await first?.close();
});

/** An operations request on each replica: 404 (no such job) while the token stands. */
async function answers(accessToken: string): Promise<number[]> {
  return Promise.all(
    [first, second].map(async (replica) => {
      const response = await replica.request(`/api/v1/operations/jobs/${crypto.randomUUID()}`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      await response.body?.cancel();
      return response.status;
    }),
  );
}

async function freshCode(): Promise<{ code: string; codeVerifier: string }> {
  const pending = await startAuthorization({
    issuer: first.issuerUrl,
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    resource: RESOURCE,
    scope: "openid",
  });
  return { code: codeOf(await callbackAfterSignIn(pending, account)), codeVerifier: pending.codeVerifier };
}

function exchange(code: string, codeVerifier: string) {
  return tokenRequest(first.issuerUrl, {
    grant_type: "authorization_code",
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    resource: RESOURCE,
    code,
    code_verifier: codeVerifier,
  });
}

function refreshWith(refreshToken: string) {
  return tokenRequest(first.issuerUrl, {
    grant_type: "refresh_token",
    client_id: client.clientId,
    resource: RESOURCE,
    refresh_token: refreshToken,
  });
}

describe("an access token whose grant the provider revoked", () => {
  it("is refused by every replica once its authorization code is exchanged a second time", async () => {
    const { code, codeVerifier } = await freshCode();
    const issued = await exchange(code, codeVerifier);
    expect(issued.status).toBe(200);
    const accessToken = issued.body.access_token as string;
    expect(await answers(accessToken)).toEqual([404, 404]);

    expect(await exchange(code, codeVerifier)).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    expect(await answers(accessToken)).toEqual([401, 401]);
  });

  it("is refused by every replica once a rotated refresh token of its grant is used again", async () => {
    const { code, codeVerifier } = await freshCode();
    const issued = await exchange(code, codeVerifier);
    const firstRefreshToken = issued.body.refresh_token as string;
    const rotated = await refreshWith(firstRefreshToken);
    expect(rotated.status).toBe(200);
    const newest = rotated.body.access_token as string;
    const older = issued.body.access_token as string;
    expect(await answers(newest)).toEqual([404, 404]);

    expect(await refreshWith(firstRefreshToken)).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    expect(await answers(newest)).toEqual([401, 401]);
    expect(await answers(older)).toEqual([401, 401]);
  });

  it("says why in the error body", async () => {
    const { code, codeVerifier } = await freshCode();
    const accessToken = (await exchange(code, codeVerifier)).body.access_token as string;
    await exchange(code, codeVerifier);
    const response = await first.request("/api/v1/operations/jobs", {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ message: expect.stringContaining("grant was revoked") });
  });

  it("leaves the grants of other sign-ins standing", async () => {
    const kept = await freshCode();
    const keptToken = (await exchange(kept.code, kept.codeVerifier)).body.access_token as string;
    const replayed = await freshCode();
    await exchange(replayed.code, replayed.codeVerifier);
    await exchange(replayed.code, replayed.codeVerifier);
    expect(await answers(keptToken)).toEqual([404, 404]);
  });
});
