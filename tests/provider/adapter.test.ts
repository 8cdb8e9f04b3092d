import { createHmac, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type AdapterPayload, errors } from "oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TJM_CLIENT_METADATA } from "../../manager/src/identity/clients/index.ts";
import type { Sql } from "../../manager/src/platform/db.ts";
import { postgresAdapter, purgeExpiredRecords } from "../../manager/src/provider/adapter.ts";
import { compareClientSecretsByHmac } from "../../manager/src/provider/clients.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: Sql;
let adapterFor: ReturnType<typeof postgresAdapter>;

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
  sql = schema.sql;
  adapterFor = postgresAdapter(sql);
});
afterAll(() => schema?.drop());

const uniqueId = (what: string) => `${what}-${crypto.randomUUID()}`;
const epochNow = () => Math.floor(Date.now() / 1000);

async function storedRow(model: string, id: string) {
  const [row] = await sql`select * from oidc_records where model = ${model} and id = ${id}`;
  return row;
}

describe("records (every model but Client)", () => {
  it("finds what was upserted, as it was given, and an upsert of the same id replaces it", async () => {
    const tokens = adapterFor("AccessToken");
    const id = uniqueId("at");
    const payload = { jti: id, kind: "AccessToken", accountId: "acc-1", scope: "openid", exp: 1 };
    await tokens.upsert(id, payload, 60);
    expect(await tokens.find(id)).toEqual(payload);

    await tokens.upsert(id, { ...payload, scope: "openid email" }, 60);
    expect(await tokens.find(id)).toEqual({ ...payload, scope: "openid email" });
    expect(await sql`select count(*)::int as n from oidc_records where id = ${id}`).toEqual([{ n: 1 }]);
  });

  it("keeps models apart: the same id under another model is not found", async () => {
    const id = uniqueId("shared");
    await adapterFor("AuthorizationCode").upsert(id, { jti: id, kind: "AuthorizationCode" }, 60);
    expect(await adapterFor("RefreshToken").find(id)).toBeUndefined();
    expect(await adapterFor("AuthorizationCode").find("never-stored")).toBeUndefined();
  });

  it("stores the expiry from expiresIn on the database's clock, and none when none is given", async () => {
    const id = uniqueId("grant");
    await adapterFor("Grant").upsert(id, { jti: id, kind: "Grant" }, 3600);
    const [{ seconds } = { seconds: 0 }] = await sql<{ seconds: number }[]>`
      select extract(epoch from expires_at - now())::float8 as seconds
      from oidc_records where model = 'Grant' and id = ${id}`;
    expect(seconds).toBeGreaterThan(3595);
    expect(seconds).toBeLessThanOrEqual(3600);

    const forever = uniqueId("grant");
    await adapterFor("Grant").upsert(forever, { jti: forever, kind: "Grant" });
    expect((await storedRow("Grant", forever))?.expiresAt).toBeNull();
    expect(await adapterFor("Grant").find(forever)).toEqual({ jti: forever, kind: "Grant" });
  });

  it("never finds a record past its expiry, by id, uid or user code, even before the purge", async () => {
    const session = adapterFor("Session");
    const devices = adapterFor("DeviceCode");
    const sessionId = uniqueId("sess");
    const uid = uniqueId("uid");
    const deviceId = uniqueId("dc");
    const userCode = uniqueId("code");
    await session.upsert(sessionId, { jti: sessionId, kind: "Session", uid }, 1);
    await devices.upsert(deviceId, { jti: deviceId, kind: "DeviceCode", userCode }, 1);
    expect(await session.findByUid(uid)).toMatchObject({ jti: sessionId });
    expect(await devices.findByUserCode(userCode)).toMatchObject({ jti: deviceId });

    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await session.find(sessionId)).toBeUndefined();
    expect(await session.findByUid(uid)).toBeUndefined();
    expect(await devices.find(deviceId)).toBeUndefined();
    expect(await devices.findByUserCode(userCode)).toBeUndefined();
    expect(await storedRow("Session", sessionId)).toBeDefined();
  });

  it("purges expired rows and only those", async () => {
    const tokens = adapterFor("AccessToken");
    const expired = uniqueId("at");
    const live = uniqueId("at");
    await tokens.upsert(expired, { jti: expired }, 60);
    await tokens.upsert(live, { jti: live }, 60);
    await sql`update oidc_records set expires_at = now() - interval '1 second' where id = ${expired}`;
    expect(await tokens.find(expired)).toBeUndefined();

    expect(await purgeExpiredRecords(sql)).toBeGreaterThanOrEqual(1);
    expect(await storedRow("AccessToken", expired)).toBeUndefined();
    expect(await tokens.find(live)).toEqual({ jti: live });
    expect(await purgeExpiredRecords(sql)).toBe(0);
  });

  it("consume marks the record consumed once; find shows when, and a rewrite keeps it consumed", async () => {
    const codes = adapterFor("AuthorizationCode");
    const id = uniqueId("code");
    await codes.upsert(id, { jti: id, kind: "AuthorizationCode" }, 60);
    expect(await codes.find(id)).toEqual({ jti: id, kind: "AuthorizationCode" });

    const before = epochNow();
    await codes.consume(id);
    const consumed = (await codes.find(id))?.consumed;
    expect(consumed).toBeGreaterThanOrEqual(before - 1);
    expect(consumed).toBeLessThanOrEqual(epochNow());

    await sql`update oidc_records set consumed_at = consumed_at - interval '10 seconds' where id = ${id}`;
    const firstConsumed = (await codes.find(id))?.consumed;
    // A second use loses: one code, one exchange, whoever marked it first.
    await expect(codes.consume(id)).rejects.toThrow(errors.InvalidGrant);
    expect((await codes.find(id))?.consumed).toBe(firstConsumed);
    await codes.upsert(id, { jti: id, kind: "AuthorizationCode", scope: "openid" }, 60);
    expect(await codes.find(id)).toEqual({
      jti: id,
      kind: "AuthorizationCode",
      scope: "openid",
      consumed: firstConsumed,
    });
  });

  it("destroy removes that record and nothing else", async () => {
    const interactions = adapterFor("Interaction");
    const gone = uniqueId("int");
    const kept = uniqueId("int");
    await interactions.upsert(gone, { jti: gone }, 60);
    await interactions.upsert(kept, { jti: kept }, 60);
    await interactions.destroy(gone);
    expect(await interactions.find(gone)).toBeUndefined();
    expect(await interactions.find(kept)).toEqual({ jti: kept });
  });

  it("revokeByGrantId removes every token and code of that grant, whichever model asks, and nothing else", async () => {
    const grant = uniqueId("grant");
    const otherGrant = uniqueId("grant");
    const ofGrant = (model: string) => ({ model, id: uniqueId(model), grantId: grant });
    const revoked = ["AccessToken", "RefreshToken", "AuthorizationCode", "DeviceCode"].map(ofGrant);
    for (const record of revoked) {
      await adapterFor(record.model).upsert(record.id, { jti: record.id, grantId: grant }, 60);
    }
    const otherToken = uniqueId("at");
    await adapterFor("AccessToken").upsert(otherToken, { jti: otherToken, grantId: otherGrant }, 60);
    await adapterFor("Grant").upsert(grant, { jti: grant, kind: "Grant", accountId: "acc-1" }, 60);
    const session = uniqueId("sess");
    await adapterFor("Session").upsert(
      session,
      { jti: session, uid: uniqueId("uid"), accountId: "acc-1" },
      60,
    );

    await adapterFor("RefreshToken").revokeByGrantId(grant);

    for (const record of revoked) expect(await adapterFor(record.model).find(record.id)).toBeUndefined();
    expect(await adapterFor("AccessToken").find(otherToken)).toEqual({
      jti: otherToken,
      grantId: otherGrant,
    });
    // The Grant itself goes only when the provider's revokeGrantPolicy says so (Grant.destroy).
    expect(await adapterFor("Grant").find(grant)).toMatchObject({ jti: grant });
    expect(await adapterFor("Session").find(session)).toMatchObject({ jti: session });
  });

  it("a session's uid finds it, and its sids and account are stored for the portal", async () => {
    const sessions = adapterFor("Session");
    const id = uniqueId("sess");
    const uid = uniqueId("uid");
    const payload: AdapterPayload = {
      jti: id,
      kind: "Session",
      uid,
      accountId: "acc-7",
      authorizations: { "admin-console": { sid: "sid-a" }, "account-portal": { sid: "sid-b" } },
    };
    await sessions.upsert(id, payload, 60);
    expect(await sessions.findByUid(uid)).toEqual(payload);
    expect(await adapterFor("Interaction").findByUid(uid)).toBeUndefined();
    expect(await sessions.findByUid("unknown")).toBeUndefined();
    expect(await storedRow("Session", id)).toMatchObject({
      accountId: "acc-7",
      sids: ["sid-a", "sid-b"],
      uid,
    });
    const bySid = await sql`select id from oidc_records where model = 'Session' and ${"sid-b"} = any (sids)`;
    expect(bySid.map((row) => row.id)).toEqual([id]);
  });

  it("a device code's user code finds it, under that model only", async () => {
    const id = uniqueId("dc");
    const userCode = uniqueId("WDJB-MJHT");
    await adapterFor("DeviceCode").upsert(id, { jti: id, userCode, grantId: "g" }, 60);
    expect(await adapterFor("DeviceCode").findByUserCode(userCode)).toEqual({
      jti: id,
      userCode,
      grantId: "g",
    });
    expect(await adapterFor("AccessToken").findByUserCode(userCode)).toBeUndefined();
  });

  it("concurrent upserts of one id leave one row holding one of the payloads", async () => {
    const id = uniqueId("sess");
    const payloads = Array.from({ length: 16 }, (_, i) => ({ jti: id, kind: "Session", loginTs: i }));
    await Promise.all(payloads.map((payload) => adapterFor("Session").upsert(id, payload, 60)));
    expect(await sql`select count(*)::int as n from oidc_records where id = ${id}`).toEqual([{ n: 1 }]);
    expect(payloads).toContainEqual(await adapterFor("Session").find(id));
  });

  it("a second schema cannot see the first one's records", async () => {
    const other = await createTestSchema(testServices().databaseUrl);
    try {
      const id = uniqueId("at");
      await adapterFor("AccessToken").upsert(id, { jti: id, scope: "first" }, 60);
      expect(await postgresAdapter(other.sql)("AccessToken").find(id)).toBeUndefined();
      await postgresAdapter(other.sql)("AccessToken").upsert(id, { jti: id, scope: "second" }, 60);
      expect(await adapterFor("AccessToken").find(id)).toEqual({ jti: id, scope: "first" });
      expect(await postgresAdapter(other.sql)("AccessToken").find(id)).toEqual({ jti: id, scope: "second" });
    } finally {
      await other.drop();
    }
  });
});

const SERVER_KEY = "test-client-secret-key";
const hmacOf = (secret: string) => createHmac("sha256", SERVER_KEY).update(secret).digest("base64url");
/** Stands in for identity/clients/secrets.ts (written alongside): the same HMAC-SHA-256 comparison. */
const verifyByHmac = (presented: string, stored: string) => {
  const expected = Buffer.from(hmacOf(presented));
  const actual = Buffer.from(stored);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
};

async function insertClient(columns: Record<string, unknown>): Promise<{ id: string; clientId: string }> {
  const clientId = uniqueId("client");
  const [row] = await sql<{ id: string }[]>`
    insert into oauth_clients ${sql({ clientId, name: "Test client", ...columns })} returning id`;
  if (!row) throw new Error("no client row");
  return { id: row.id, clientId };
}

describe("clients (read from oauth_clients)", () => {
  it("maps a client's columns, resources and projects to oidc-provider metadata", async () => {
    const { id, clientId } = await insertClient({
      clientSecretHmac: hmacOf("tjm_cs_secret"),
      redirectUris: ["https://console.example/callback"],
      postLogoutRedirectUris: ["https://console.example/"],
      grantTypes: ["authorization_code", "refresh_token"],
      firstParty: true,
      backchannelLogoutUri: "https://console.example/backchannel",
      authorizationVersion: 7,
      metadata: sql.json({
        id_token_signed_response_alg: "ES256",
        client_secret: "plain",
        grant_types: ["implicit"],
      }),
    });
    const [organization] =
      await sql`insert into organizations (id, name) values (gen_random_uuid(), ${uniqueId("org")}) returning id`;
    const [project] = await sql`
      insert into projects (id, organization_id, name) values (gen_random_uuid(), ${organization?.id}, 'films') returning id`;
    await sql`insert into oauth_client_projects (client_id, project_id) values (${id}, ${project?.id})`;
    await sql`insert into oauth_client_resources (client_id, resource, scopes)
      values (${id}, 'urn:tjm:operations', '{jobs:read,jobs:write}'), (${id}, 'account-portal', '{}')`;

    expect(await adapterFor("Client").find(clientId)).toEqual({
      id_token_signed_response_alg: "ES256",
      client_id: clientId,
      client_name: "Test client",
      client_secret: hmacOf("tjm_cs_secret"),
      redirect_uris: ["https://console.example/callback"],
      post_logout_redirect_uris: ["https://console.example/"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      backchannel_logout_uri: "https://console.example/backchannel",
      backchannel_logout_session_required: true,
      first_party: true,
      authorization_version: 7,
      resource_scopes: { "urn:tjm:operations": ["jobs:read", "jobs:write"], "account-portal": [] },
      project_ids: [project?.id],
      roles: [],
      user_ids: [],
      directory_sources: [],
    });
  });

  it("a public client has no secret, and the table refuses a secret-less confidential one", async () => {
    const { clientId } = await insertClient({
      tokenEndpointAuthMethod: "none",
      redirectUris: ["http://127.0.0.1/cb"],
    });
    const metadata = await adapterFor("Client").find(clientId);
    expect(metadata).not.toHaveProperty("client_secret");
    expect(metadata).toMatchObject({
      token_endpoint_auth_method: "none",
      resource_scopes: {},
      project_ids: [],
    });
    await expect(insertClient({ tokenEndpointAuthMethod: "client_secret_post" })).rejects.toThrow(
      /check constraint/,
    );
  });

  it("a disabled or unknown client is not found, and the provider cannot write clients", async () => {
    const { clientId } = await insertClient({ clientSecretHmac: hmacOf("s"), disabledAt: new Date() });
    expect(await adapterFor("Client").find(clientId)).toBeUndefined();
    expect(await adapterFor("Client").find("no-such-client")).toBeUndefined();
    await expect(adapterFor("Client").upsert(clientId, { client_id: clientId })).rejects.toThrow(
      "oauth_clients are written by client management, not by the provider",
    );
  });

  describe("in oidc-provider 9", () => {
    let provider: Provider;
    beforeAll(() => {
      provider = new Provider("http://127.0.0.1:1", {
        adapter: postgresAdapter(sql),
        extraClientMetadata: { properties: [...TJM_CLIENT_METADATA] },
        features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
      });
      compareClientSecretsByHmac(provider, verifyByHmac);
    });

    it("authenticates client_secret_basic against the stored HMAC: the secret gets a token, the HMAC itself does not", async () => {
      const secret = `tjm_cs_${crypto.randomUUID()}`;
      const { clientId } = await insertClient({
        clientSecretHmac: hmacOf(secret),
        grantTypes: ["client_credentials"],
        responseTypes: [],
      });
      const client = await provider.Client.find(clientId);
      expect(client?.clientSecret).toBe(hmacOf(secret));
      expect(await client?.compareClientSecret(secret)).toBe(true);
      expect(await client?.compareClientSecret(`${secret}x`)).toBe(false);
      expect(await client?.compareClientSecret(hmacOf(secret))).toBe(false);

      const server = createServer(provider.callback()).listen(0, "127.0.0.1");
      await once(server, "listening");
      try {
        const { port } = server.address() as AddressInfo;
        const requestToken = (password: string) =>
          fetch(`http://127.0.0.1:${port}/token`, {
            method: "POST",
            headers: { authorization: `Basic ${btoa(`${clientId}:${password}`)}` },
            body: new URLSearchParams({ grant_type: "client_credentials" }),
          });
        const granted = await requestToken(secret);
        expect(granted.status).toBe(200);
        const { access_token: accessToken } = (await granted.json()) as { access_token: string };
        expect(await adapterFor("ClientCredentials").find(accessToken)).toMatchObject({ clientId });
        const refused = await requestToken(hmacOf(secret));
        expect(refused.status).toBe(401);
        expect(await refused.json()).toMatchObject({ error: "invalid_client" });
      } finally {
        server.close();
      }
    });

    it("sees a new authorization version on the next lookup, and a disabled client is gone", async () => {
      const { id, clientId } = await insertClient({
        clientSecretHmac: hmacOf("s"),
        redirectUris: ["https://app.example/cb"],
      });
      expect((await provider.Client.find(clientId))?.metadata()).toMatchObject({ authorization_version: 1 });
      await sql`update oauth_clients set authorization_version = authorization_version + 1 where id = ${id}`;
      expect((await provider.Client.find(clientId))?.metadata()).toMatchObject({ authorization_version: 2 });
      await sql`update oauth_clients set disabled_at = now() where id = ${id}`;
      expect(await provider.Client.find(clientId)).toBeUndefined();
    });
  });
});
