/**
 * Two Manager replicas serve one provider (issue 12): on one schema and one issuer URL, a
 * sign-in started on one replica finishes on the other, because both derive their cookie keys
 * from the same PROVIDER_KEY_ENCRYPTION_KEY. A replica with another key cannot read the first
 * one's cookies: the same sign-in fails there, which shows the sharing is what makes it work.
 */

import {
  finishAuthorization,
  type PendingAuthorization,
  startAuthorization,
} from "@tjm/devstack/oidc-client";
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
import { followToRedirectUri, postSignInForm } from "./provider-requests.ts";

const RESOURCE = resourceIndicator(OPERATIONS_AUDIENCE);
const OTHER_PROVIDER_KEY_ENCRYPTION_KEY = "another-provider-key-encryption-key-fedcba9876543210";
/**
 * No replica re-reads the signing keys while a test swaps them (the refresh may not exceed the
 * publish lead, whose default is 600 s).
 */
const KEYS_READ_ONCE = { PROVIDER_KEY_REFRESH_SECONDS: "600" };

let first: TestManager;
let client: TestClient;
let account: TestAccount;
const replicas: TestManager[] = [];

beforeAll(async () => {
  first = await TestManager.start({ env: KEYS_READ_ONCE });
  client = await createTestClient(first.sql, { resources: [OPERATIONS_AUDIENCE] });
  account = await createTestAccount(first.sql, { roles: ["operator"] });
});
afterAll(async () => {
  for (const replica of replicas) await replica.close({ keepStreams: true });
  await first?.close();
});

/** Another Manager on the first one's schema, serving the provider under the same issuer URL. */
async function replicaOfFirst(env: Record<string, string> = {}): Promise<TestManager> {
  const replica = await TestManager.start({
    schema: first.schema,
    env: { ...KEYS_READ_ONCE, OIDC_ISSUER_URL: first.issuerUrl, ...env },
  });
  replicas.push(replica);
  return replica;
}

function startOnFirst(requests: string[] = []): Promise<PendingAuthorization> {
  return startAuthorization({
    issuer: first.issuerUrl,
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    resource: RESOURCE,
    onRequest: (method, url) => requests.push(`${method} ${url}`),
  });
}

async function jobAnswer(manager: TestManager, accessToken: string): Promise<number> {
  const response = await manager.request(`/api/v1/operations/jobs/${crypto.randomUUID()}`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  await response.body?.cancel();
  return response.status;
}

describe("replicas with the same PROVIDER_KEY_ENCRYPTION_KEY", () => {
  it("finish on one a sign-in started on the other, and both accept its token", async () => {
    const second = await replicaOfFirst();
    expect(second.issuerUrl).toBe(first.issuerUrl);
    expect(second.baseUrl).not.toBe(first.baseUrl);

    const requests: string[] = [];
    const pending = await startOnFirst(requests);
    expect(pending.page?.url.origin).toBe(first.baseUrl);
    const startedOnFirst = requests.length;
    const tokens = await finishAuthorization(pending, {
      email: account.email,
      password: account.password,
      providerOrigin: second.baseUrl,
    });

    // The sign-in form and the provider's resumption after it were served by the second replica.
    const browserRequests = requests.slice(startedOnFirst).filter((request) => !request.endsWith("/token"));
    expect(browserRequests.length).toBeGreaterThanOrEqual(2);
    for (const request of browserRequests) expect(request).toContain(second.baseUrl);
    expect(browserRequests[0]).toMatch(/^POST .*\/oidc\/interaction\/[^/]+\/login\?locale=en$/);

    expect(tokens.claims).toMatchObject({
      iss: first.issuerUrl,
      aud: OPERATIONS_AUDIENCE,
      sub: account.accountId,
    });
    expect(await jobAnswer(first, tokens.accessToken)).toBe(404);
    expect(await jobAnswer(second, tokens.accessToken)).toBe(404);
  });
});

describe("a replica with another PROVIDER_KEY_ENCRYPTION_KEY", () => {
  /**
   * A replica decrypts every stored signing key at start, and the first one's do not decrypt
   * under another key: the other replica starts while they are set aside, and they come back
   * once it has made (and kept in memory) a key of its own.
   */
  async function replicaWithOtherKey(): Promise<TestManager> {
    const sql = first.sql;
    const keys = await sql<
      {
        kid: string;
        alg: string;
        publicJwk: object;
        privateJwkEncrypted: Uint8Array;
        createdAt: Date;
        signsFrom: Date;
      }[]
    >`select kid, alg, public_jwk, private_jwk_encrypted, created_at, signs_from from provider_signing_keys`;
    await sql`delete from provider_signing_keys`;
    try {
      return await replicaOfFirst({ PROVIDER_KEY_ENCRYPTION_KEY: OTHER_PROVIDER_KEY_ENCRYPTION_KEY });
    } finally {
      await sql.begin(async (tx) => {
        await tx`delete from provider_signing_keys`;
        for (const key of keys) {
          await tx`
            insert into provider_signing_keys (kid, alg, public_jwk, private_jwk_encrypted, created_at, signs_from)
            values (${key.kid}, ${key.alg}, ${tx.json(key.publicJwk as never)}, ${key.privateJwkEncrypted},
              ${key.createdAt}, ${key.signsFrom})`;
        }
      });
    }
  }

  it("cannot finish a sign-in started on the first: the interaction cookie's signature does not match", async () => {
    const other = await replicaWithOtherKey();
    const signingIn = await createTestAccount(first.sql, { roles: ["operator"] });
    const pending = await startOnFirst();

    const there = await postSignInForm(pending, signingIn, other.baseUrl);
    expect(there.status).toBe(400);
    expect(there.location).toBeNull();
    expect(there.html).toContain("This sign-in has expired or was started in another browser.");
    expect(
      await first.sql`select from audit_events where event = 'auth.sign-in' and actor_account_id = ${signingIn.accountId}`,
    ).toHaveLength(0);

    // The interaction itself was fine: the replica that set its cookie finishes it.
    const here = await postSignInForm(pending, signingIn);
    const callback = await followToRedirectUri(
      pending.session,
      here,
      (pending.page as { url: URL }).url,
      client.redirectUri,
    );
    expect(callback.searchParams.get("code")).toEqual(expect.any(String));
  });
});
