/**
 * Client management (/api/v1/management/clients): every route refuses each wrong token kind;
 * clients are listed, read, created, replaced and deleted under the clients' rules; a rotated
 * secret keeps authenticating through its grace window and not a second after, and concurrent
 * rotations leave one current secret and at most one in grace; a grant change refuses every
 * token issued before on the very next request on both replicas; a deleted client is signed
 * out alone (back-channel logout) while the session's other client stays; each change writes
 * one audit row, refusals included.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type BrowserSession, OAuthError, refresh, signIn } from "@tjm/devstack/oidc-client";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import {
  clientToken,
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const BASE = "/api/v1/management/clients";
const PORTAL = resourceIndicator(ACCOUNT_PORTAL_AUDIENCE);

let manager: TestManager;
let replica: TestManager;
let receiver: Server;
const logouts = new Map<string, number>();
let admin: TestAccount;
let adminToken: string;
let noRoleToken: string;
let portalToken: string;
let externalToken: string;
let portalClient: TestClient;
/** The admin's console sign-in, for a token of an older sign-in (recent authentication). */
let adminSignedIn: { session: BrowserSession; claims: Record<string, unknown> };
let consoleClient: TestClient;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    logouts.set(req.url ?? "/", (logouts.get(req.url ?? "/") ?? 0) + 1);
    req.resume();
    res.writeHead(200).end();
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  manager = await TestManager.start({ env: { PROVIDER_PRIVATE_NETWORK_HOSTS: "127.0.0.1" } });
  replica = await TestManager.start({ schema: manager.schema, issuerUrl: manager.issuerUrl });
  const console = await createTestClient(manager.sql, {
    resources: [ADMIN_CONSOLE_AUDIENCE],
    name: "Console",
  });
  portalClient = await createTestClient(manager.sql, {
    resources: [ACCOUNT_PORTAL_AUDIENCE],
    name: "Portal",
  });
  const adminConsole = resourceIndicator(ADMIN_CONSOLE_AUDIENCE);
  const [withRole, losingRole, member] = await Promise.all([
    createTestAccount(manager.sql, { roles: ["client-admin"] }),
    createTestAccount(manager.sql, { roles: ["client-admin"] }),
    createTestAccount(manager.sql),
  ]);
  admin = withRole;
  const [adminSignIn, losingSignIn, portalSignIn, external] = await Promise.all([
    signInAs(manager.issuerUrl, console, withRole, adminConsole),
    signInAs(manager.issuerUrl, console, losingRole, adminConsole),
    signInAs(manager.issuerUrl, portalClient, member, PORTAL),
    manager.operatorToken(),
  ]);
  // The provider gives admin-console tokens only to client admins: the role goes after the sign-in.
  await manager.sql`delete from account_roles where account_id = ${losingRole.accountId}`;
  adminToken = adminSignIn.accessToken;
  adminSignedIn = adminSignIn;
  consoleClient = console;
  noRoleToken = losingSignIn.accessToken;
  portalToken = portalSignIn.accessToken;
  externalToken = external;
}, 60_000);
afterAll(async () => {
  receiver?.closeAllConnections();
  receiver?.close();
  await replica?.close();
  await manager?.close();
});

function call(
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  base = manager.baseUrl,
) {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const confidential = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "confidential",
  grantTypes: ["client_credentials"],
  resources: [ACCOUNT_PORTAL_AUDIENCE],
  ...extra,
});

async function created(body: unknown) {
  const response = await call(adminToken, "POST", BASE, body);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as { id: string; clientId: string; clientSecret: string | null } & Record<
    string,
    unknown
  >;
}

function auditRows(clientId: string, event: string) {
  return manager.sql<{ result: string; actorAccountId: string; details: Record<string, unknown> }[]>`
    select result, actor_account_id::text, details from audit_events
    where client_id = ${clientId} and event = ${event} order by id`;
}

/** Whether client_credentials with this secret gets a token. */
async function authenticates(clientId: string, secret: string): Promise<boolean> {
  try {
    await clientToken(manager.issuerUrl, { clientId, clientSecret: secret, redirectUri: "" }, PORTAL);
    return true;
  } catch (err) {
    if (err instanceof OAuthError) return false;
    throw err;
  }
}

/** The provider's introspection of `token`, asked by the portal client (its own tokens only). */
async function introspect(token: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${manager.issuerUrl}/token/introspection`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, client_id: portalClient.clientId }),
  });
  return response.json();
}

describe("who may call client management", () => {
  const routes: [string, string, unknown?][] = [
    ["GET", BASE],
    ["POST", BASE, confidential("refused")],
    ["GET", `${BASE}/some-client`],
    ["PUT", `${BASE}/some-client`, { name: "x", grantTypes: ["client_credentials"] }],
    ["DELETE", `${BASE}/some-client`],
    ["POST", `${BASE}/rotate-secret`, { client: "some-client" }],
    ["GET", `${BASE}/some-client/oauth-grants`],
    ["PUT", `${BASE}/some-client/oauth-grants/account-portal`, { scopes: [] }],
    ["DELETE", `${BASE}/some-client/oauth-grants/account-portal`],
    ["GET", `${BASE}/some-client/resources`],
    ["POST", `${BASE}/some-client/roles`, { role: "operator" }],
    ["DELETE", `${BASE}/some-client/users/${crypto.randomUUID()}`],
    ["DELETE", `${BASE}/some-client/directory-sources/built-in`],
  ];

  it("refuses no token (401), and a token without the role, of another audience or of the external issuer (403)", async () => {
    for (const [method, path, body] of routes) {
      const statuses = await Promise.all(
        [undefined, noRoleToken, portalToken, externalToken].map(async (token) => {
          const response = await call(token, method, path, body);
          return [response.status, (await response.json()).code];
        }),
      );
      expect(statuses, `${method} ${path}`).toEqual([
        [401, "auth.token_missing"],
        [403, "auth.token_refused"],
        [403, "auth.audience_missing"],
        [403, "auth.audience_missing"],
      ]);
    }
  });
});

describe("clients", () => {
  it("creates a client, its secret shown once and not cached, and writes one audit row", async () => {
    const response = await call(adminToken, "POST", BASE, confidential("Nightly export"));
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const client = await response.json();
    expect(client).toMatchObject({
      name: "Nightly export",
      type: "confidential",
      grantTypes: ["client_credentials"],
      resources: [ACCOUNT_PORTAL_AUDIENCE],
      authorizationVersion: 1,
      clientSecret: expect.stringMatching(/^tjm_cs_/),
    });
    expect(await authenticates(client.clientId, client.clientSecret)).toBe(true);
    const read = await (await call(adminToken, "GET", `${BASE}/${client.id}`)).json();
    expect(read).not.toHaveProperty("clientSecret");
    const [row] = await manager.sql<{ hmac: string }[]>`
      select client_secret_hmac as hmac from oauth_clients where id = ${client.id}`;
    expect(row?.hmac).not.toContain(client.clientSecret);
    expect(await auditRows(client.clientId, "client.created")).toEqual([
      expect.objectContaining({ result: "success", actorAccountId: admin.accountId }),
    ]);
  });

  it("reads by UUID or by client_id, and answers 404 for neither", async () => {
    const client = await created(confidential("By either id"));
    const byId = await (await call(adminToken, "GET", `${BASE}/${client.id}`)).json();
    const byClientId = await (await call(adminToken, "GET", `${BASE}/${client.clientId}`)).json();
    expect(byId).toEqual(byClientId);
    const missing = await call(adminToken, "GET", `${BASE}/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe("client.not_found");
  });

  it("refuses a definition breaking the rules, every problem with its code, and audits the refusal", async () => {
    const response = await call(adminToken, "POST", BASE, {
      name: "Broken",
      type: "public",
      grantTypes: ["refresh_token", "client_credentials"],
      redirectUris: ["http://example.com/cb", "https://example.com/cb#fragment", "not a uri"],
      backchannelLogoutUri: "https://example.com/logout",
      resources: ["unknown-resource"],
      projectIds: ["not-a-uuid"],
      accessTokenTtlSeconds: 5,
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.code).toBe("validation.failed");
    expect(body.details.map((detail: { code: string }) => detail.code).sort()).toEqual(
      [
        "client.redirect_uri_invalid",
        "client.redirect_uri_invalid",
        "client.redirect_uri_invalid",
        "client.redirect_uri_without_code_grant",
        "client.logout_uri_without_code_grant",
        "client.refresh_without_code_grant",
        "client.resource_unknown",
        "client.project_id_invalid",
        "client.public_client_credentials",
        "client.access_token_ttl_out_of_range",
      ].sort(),
    );
    const [refused] = await manager.sql<{ details: Record<string, unknown> }[]>`
      select details from audit_events
      where event = 'client.created' and result = 'failure' and actor_account_id = ${admin.accountId}`;
    expect(refused?.details).toEqual({ reason: "validation.failed" });
  });

  const URI_FIELDS = [
    ["redirectUris", (uri: string) => ({ redirectUris: [uri] })],
    ["postLogoutRedirectUris", (uri: string) => ({ postLogoutRedirectUris: [uri] })],
    ["backchannelLogoutUri", (uri: string) => ({ backchannelLogoutUri: uri })],
  ] as const;

  it.each([
    ["userinfo with a password", "https://user:pw@a.example/cb"],
    ["userinfo that reads as the host", "https://a.example@evil.example/cb"],
    ["a wildcard", "https://*.a.example/cb"],
    ["a space", "https://a.example/c b"],
    ["one slash after the scheme", "https:/a.example/cb"],
    ["a host the parser rewrites", "https://A.example/cb"],
  ])("refuses a URI with %s in each URI field, at the field, creating nothing", async (_, uri) => {
    for (const [field, uris] of URI_FIELDS) {
      const response = await call(adminToken, "POST", BASE, {
        name: `Refused ${field}`,
        type: "confidential",
        grantTypes: ["authorization_code"],
        redirectUris: ["https://a.example/cb"],
        ...uris(uri),
      });
      expect(response.status, `${field}: ${uri}`).toBe(400);
      expect((await response.json()).details, `${field}: ${uri}`).toEqual([
        { path: field, message: expect.stringContaining(uri), code: "client.redirect_uri_invalid" },
      ]);
    }
    const rows = await manager.sql`select 1 from oauth_clients where name like 'Refused %'`;
    expect(rows).toHaveLength(0);
  });

  it.each([
    ["only invisible characters", "\u200b\u200c\u2800", "name.invisible"],
    ["a right-to-left override", "Reports\u202etxt.exe", "name.bidi_override"],
    ["a bidirectional isolate", "\u2066Reports\u2069", "name.bidi_override"],
  ])("refuses a name of %s at name, on create and on replace", async (_, name, code) => {
    const existing = await created(confidential("Named"));
    for (const [method, path] of [
      ["POST", BASE],
      ["PUT", `${BASE}/${existing.id}`],
    ] as const) {
      const response = await call(adminToken, method, path, confidential(name));
      expect(response.status, method).toBe(400);
      expect((await response.json()).details, method).toEqual([
        { path: "name", message: expect.any(String), code },
      ]);
    }
  });

  it("keeps ZWNJ and ZWJ in a name", async () => {
    const client = await created(confidential("گزارش\u200cها \u200d"));
    expect(client.name).toBe("گزارش\u200cها \u200d");
  });

  it("takes a redirect URI exactly as the URL parser writes it", async () => {
    const client = await created(
      confidential("Exact URIs", {
        grantTypes: ["authorization_code"],
        redirectUris: ["https://a.example/cb?tenant=x%20y", "http://127.0.0.1:8080/cb", "http://[::1]/cb"],
        postLogoutRedirectUris: ["https://a.example/"],
      }),
    );
    expect(client.redirectUris).toEqual([
      "https://a.example/cb?tenant=x%20y",
      "http://127.0.0.1:8080/cb",
      "http://[::1]/cb",
    ]);
  });

  it("replaces the whole definition with PUT, keeping its type, secret and grants", async () => {
    const client = await created(
      confidential("Before", {
        grantTypes: ["authorization_code", "refresh_token"],
        redirectUris: ["https://before.example.com/cb"],
      }),
    );
    const replaced = await call(adminToken, "PUT", `${BASE}/${client.clientId}`, {
      name: "After",
      grantTypes: ["authorization_code"],
      redirectUris: ["https://after.example.com/cb", "http://127.0.0.1:8080/cb"],
      accessTokenTtlSeconds: 120,
    });
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toMatchObject({
      name: "After",
      type: "confidential",
      grantTypes: ["authorization_code"],
      responseTypes: ["code"],
      redirectUris: ["https://after.example.com/cb", "http://127.0.0.1:8080/cb"],
      postLogoutRedirectUris: [],
      resources: [ACCOUNT_PORTAL_AUDIENCE],
      accessTokenTtlSeconds: 120,
      authorizationVersion: 1,
    });
    const refused = await call(adminToken, "PUT", `${BASE}/${client.id}`, {
      name: "After",
      grantTypes: ["authorization_code"],
      redirectUris: [],
    });
    expect(refused.status).toBe(400);
    expect((await refused.json()).details).toEqual([
      expect.objectContaining({ path: "redirectUris", code: "client.redirect_uri_required" }),
    ]);
    const rows = await auditRows(client.clientId, "client.updated");
    expect(rows.map((row) => row.result)).toEqual(["success", "failure"]);
    expect(rows[0]?.details.changed?.toString().split(",").sort()).toEqual([
      "accessTokenTtlSeconds",
      "grantTypes",
      "name",
      "redirectUris",
    ]);
  });

  it("lists with filters, the jobs list's envelope and bounds, in a stable order", async () => {
    const tag = `list-${crypto.randomUUID().slice(0, 8)}`;
    const made = [];
    for (const type of ["confidential", "public", "confidential"] as const) {
      made.push(
        await created(
          type === "public"
            ? {
                name: `${tag} ${type}`,
                type,
                grantTypes: ["authorization_code"],
                redirectUris: ["http://localhost:3000/cb"],
              }
            : confidential(`${tag} ${type}`),
        ),
      );
    }
    const page = async (query: string) => {
      const response = await call(adminToken, "GET", `${BASE}?${query}`);
      expect(response.status).toBe(200);
      return response.json();
    };
    const all = await page(`name=${tag.toUpperCase()}`);
    expect(all).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(all.items.map((item: { id: string }) => item.id)).toEqual(made.map((client) => client.id));
    expect((await page(`name=${tag}&type=public`)).items.map((item: { id: string }) => item.id)).toEqual([
      made[1]?.id,
    ]);
    expect((await page(`name=${tag}&grantType=client_credentials`)).total).toBe(2);
    expect((await page(`name=${tag}&firstParty=true`)).total).toBe(0);
    const second = await page(`name=${tag}&limit=1&offset=1`);
    expect(second).toMatchObject({ total: 3, limit: 1, offset: 1, items: [{ id: made[1]?.id }] });
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await page(`name=${tag}&createdFrom=${encodeURIComponent(future)}`)).total).toBe(0);
    for (const query of ["limit=0", "limit=101", "offset=100001", "type=other", "owner=nobody"]) {
      expect((await call(adminToken, "GET", `${BASE}?${query}`)).status, query).toBe(400);
    }
  });
});

describe("secret rotation", () => {
  it("keeps the replaced secret valid through its grace window, and not one second after", async () => {
    const client = await created(confidential("Rotating"));
    const first = client.clientSecret as string;
    const response = await call(adminToken, "POST", `${BASE}/rotate-secret`, {
      client: client.clientId,
      graceSeconds: 1,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const rotated = await response.json();
    expect(rotated.clientSecret).not.toBe(first);
    const graceEnds = Date.parse(rotated.previousSecretExpiresAt);
    expect(await authenticates(client.clientId, first)).toBe(true);
    expect(await authenticates(client.clientId, rotated.clientSecret)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, graceEnds + 1000 - Date.now())));
    expect(await authenticates(client.clientId, first)).toBe(false);
    expect(await authenticates(client.clientId, rotated.clientSecret)).toBe(true);
    expect(await auditRows(client.clientId, "client.secret-rotated")).toEqual([
      expect.objectContaining({ result: "success", details: { graceSeconds: 1 } }),
    ]);
  });

  it("without grace, the replaced secret stops at once", async () => {
    const client = await created(confidential("No grace"));
    const rotated = await (
      await call(adminToken, "POST", `${BASE}/rotate-secret`, { client: client.id })
    ).json();
    expect(rotated.previousSecretExpiresAt).toBeNull();
    expect(await authenticates(client.clientId, client.clientSecret as string)).toBe(false);
    expect(await authenticates(client.clientId, rotated.clientSecret)).toBe(true);
  });

  it("two concurrent rotations leave exactly one current secret and at most one in grace", async () => {
    const client = await created(confidential("Raced"));
    const answers = await Promise.all(
      [0, 1].map(() =>
        call(adminToken, "POST", `${BASE}/rotate-secret`, { client: client.clientId, graceSeconds: 3600 }),
      ),
    );
    const secrets = await Promise.all(answers.map(async (answer) => (await answer.json()).clientSecret));
    const [row] = await manager.sql<{ current: string | null; previous: string | null }[]>`
      select client_secret_hmac as current, previous_client_secret_hmac as previous
      from oauth_clients where id = ${client.id}`;
    expect(row?.current).not.toBeNull();
    expect(row?.previous).not.toBeNull();
    // The second rotation ended the first one's grace: the original secret no longer works.
    expect(await authenticates(client.clientId, client.clientSecret as string)).toBe(false);
    expect(await Promise.all(secrets.map((secret) => authenticates(client.clientId, secret)))).toEqual([
      true,
      true,
    ]);
  });

  it("refuses a public client's rotation (409) and an unknown client (404), each audited", async () => {
    const publicClient = await created({
      name: "Public",
      type: "public",
      grantTypes: ["authorization_code"],
      redirectUris: ["http://127.0.0.1:9/cb"],
    });
    const refused = await call(adminToken, "POST", `${BASE}/rotate-secret`, { client: publicClient.id });
    expect(refused.status).toBe(409);
    expect((await refused.json()).code).toBe("client.public_without_secret");
    expect(await auditRows(publicClient.clientId, "client.secret-rotated")).toEqual([
      expect.objectContaining({ result: "failure", details: { reason: "client.public_without_secret" } }),
    ]);
    const tooLong = await call(adminToken, "POST", `${BASE}/rotate-secret`, {
      client: publicClient.id,
      graceSeconds: 7 * 24 * 3600 + 1,
    });
    expect(tooLong.status).toBe(400);
    expect((await call(adminToken, "POST", `${BASE}/rotate-secret`, { client: "nobody" })).status).toBe(404);
  });
});

describe("recent authentication", () => {
  it("rotating a secret and deleting a client need a recent sign-in; each refusal is audited", async () => {
    const client = await created(confidential("Needs a fresh sign-in"));
    // The admin's sign-in made ten minutes older: a new token of the session carries that auth_time.
    await manager.sql`
      update oidc_records set payload = jsonb_set(payload, '{loginTs}', to_jsonb(extract(epoch from now())::int - 600))
      where model = 'Session' and sids @> array[${adminSignedIn.claims.sid as string}::text]`;
    const stale = await signInAs(
      manager.issuerUrl,
      consoleClient,
      admin,
      resourceIndicator(ADMIN_CONSOLE_AUDIENCE),
      "openid offline_access",
      adminSignedIn.session,
    );
    expect(stale.claims.auth_time).toBeLessThan(Date.now() / 1000 - 590);
    for (const [method, path, body] of [
      ["POST", `${BASE}/rotate-secret`, { client: client.id }],
      ["DELETE", `${BASE}/${client.id}`, undefined],
    ] as const) {
      const refused = await call(stale.accessToken, method, path, body);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ code: "auth.reauthentication_required", maxAge: 300 });
    }
    expect((await call(stale.accessToken, "GET", `${BASE}/${client.id}`)).status).toBe(200);
    expect(await authenticates(client.clientId, client.clientSecret as string)).toBe(true);
    for (const event of ["client.secret-rotated", "client.deleted"]) {
      expect(await auditRows(client.clientId, event)).toEqual([
        expect.objectContaining({ result: "failure", details: { reason: "auth.reauthentication_required" } }),
      ]);
    }
  });
});

describe("grants and the authorization version", () => {
  it("a grant change refuses every token issued before on the very next request, on both replicas", async () => {
    const member = await createTestAccount(manager.sql);
    const signedIn = await signInAs(manager.issuerUrl, portalClient, member, PORTAL);
    for (const base of [manager.baseUrl, replica.baseUrl]) {
      expect((await call(signedIn.accessToken, "GET", "/api/v1/me", undefined, base)).status).toBe(200);
    }
    // Without a resource the access token is opaque: the provider's userinfo and introspection take it.
    const opaque = await signIn({
      issuer: manager.issuerUrl,
      clientId: portalClient.clientId,
      redirectUri: portalClient.redirectUri,
      scope: "openid offline_access",
      email: member.email,
      password: member.password,
    });
    expect(await introspect(opaque.refreshToken as string)).toMatchObject({ active: true });
    const userinfoBefore = await fetch(`${manager.issuerUrl}/me`, {
      headers: { authorization: `Bearer ${opaque.accessToken}` },
    });
    expect(userinfoBefore.status).toBe(200);
    const operationsToken = await manager.operatorToken();
    const set = await call(
      adminToken,
      "PUT",
      `${BASE}/${portalClient.clientId}/oauth-grants/account-portal`,
      {
        scopes: ["reports:read"],
      },
    );
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({
      resource: "account-portal",
      scopes: ["reports:read"],
      authorizationVersion: 2,
    });
    for (const base of [manager.baseUrl, replica.baseUrl]) {
      const refused = await call(signedIn.accessToken, "GET", "/api/v1/me", undefined, base);
      expect(refused.status).toBe(401);
      expect((await refused.json()).code).toBe("auth.token_revoked");
      // The external operator issuer's tokens carry no version and are unaffected.
      expect((await call(operationsToken, "GET", "/api/v1/operations/jobs", undefined, base)).status).toBe(
        200,
      );
    }
    // The provider refuses what was issued before too: the refresh token, the userinfo access
    // token, and both at introspection. A new sign-in gets a token of the new version.
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: portalClient.clientId,
        refreshToken: signedIn.refreshToken as string,
        resource: PORTAL,
      }),
    ).rejects.toMatchObject({ code: "invalid_grant" });
    const userinfo = await fetch(`${manager.issuerUrl}/me`, {
      headers: { authorization: `Bearer ${opaque.accessToken}` },
    });
    expect(userinfo.status).toBe(401);
    for (const token of [opaque.accessToken, opaque.refreshToken as string]) {
      expect(await introspect(token)).toEqual({ active: false });
    }
    const renewed = await signInAs(manager.issuerUrl, portalClient, member, PORTAL);
    expect(renewed.claims.tjm_authorization_version).toBe(2);
    expect((await call(renewed.accessToken, "GET", "/api/v1/me", undefined, replica.baseUrl)).status).toBe(
      200,
    );

    const again = await call(
      adminToken,
      "PUT",
      `${BASE}/${portalClient.clientId}/oauth-grants/account-portal`,
      {
        scopes: ["reports:read"],
      },
    );
    expect((await again.json()).authorizationVersion).toBe(2);
    const listed = await (
      await call(adminToken, "GET", `${BASE}/${portalClient.clientId}/oauth-grants`)
    ).json();
    expect(listed.grants).toEqual([
      { resource: "account-portal", scopes: ["reports:read"], grantedAt: expect.any(String) },
    ]);
    expect((await auditRows(portalClient.clientId, "client.grant-set")).length).toBe(1);
  });

  it("refuses older tokens on the operations and tenant audiences' routes too", async () => {
    const { projectId } = await manager.createProject();
    const tenantClient = await createTestClient(manager.sql, {
      resources: ["tjm-api"],
      grantTypes: ["client_credentials"],
      projectIds: [projectId],
    });
    const operationsClient = await createTestClient(manager.sql, { resources: ["tjm-operations"] });
    const operator = await createTestAccount(manager.sql, { roles: ["operator"] });
    const [tenant, operations] = await Promise.all([
      clientToken(manager.issuerUrl, tenantClient, resourceIndicator("tjm-api")),
      signInAs(manager.issuerUrl, operationsClient, operator, resourceIndicator("tjm-operations")),
    ]);
    const tenantPath = `/api/v1/projects/${projectId}/jobs/${crypto.randomUUID()}/resume-uploads`;
    expect((await call(tenant.accessToken, "POST", tenantPath, undefined, replica.baseUrl)).status).toBe(404);
    expect(
      (await call(operations.accessToken, "GET", "/api/v1/operations/jobs", undefined, replica.baseUrl))
        .status,
    ).toBe(200);
    for (const [client, resource] of [
      [tenantClient, "tjm-api"],
      [operationsClient, "tjm-operations"],
    ] as const) {
      const set = await call(adminToken, "PUT", `${BASE}/${client.clientId}/oauth-grants/${resource}`, {
        scopes: ["extra"],
      });
      expect(set.status).toBe(200);
    }
    for (const base of [manager.baseUrl, replica.baseUrl]) {
      expect((await call(tenant.accessToken, "POST", tenantPath, undefined, base)).status).toBe(401);
      expect(
        (await call(operations.accessToken, "GET", "/api/v1/operations/jobs", undefined, base)).status,
      ).toBe(401);
    }
  });

  it("removing a grant refuses the client's tokens and new ones for the resource", async () => {
    const client = await created(confidential("Losing its grant"));
    const token = await clientToken(
      manager.issuerUrl,
      { clientId: client.clientId, clientSecret: client.clientSecret as string, redirectUri: "" },
      PORTAL,
    );
    expect(token.accessToken).toBeTruthy();
    const removed = await call(
      adminToken,
      "DELETE",
      `${BASE}/${client.clientId}/oauth-grants/account-portal`,
    );
    expect(removed.status).toBe(204);
    expect(await authenticates(client.clientId, client.clientSecret as string)).toBe(false);
    const again = await call(adminToken, "DELETE", `${BASE}/${client.clientId}/oauth-grants/account-portal`);
    expect(again.status).toBe(404);
    expect((await again.json()).code).toBe("client.grant_not_found");
    const unknown = await call(adminToken, "PUT", `${BASE}/${client.clientId}/oauth-grants/nowhere`, {
      scopes: [],
    });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).details[0].code).toBe("client.resource_unknown");
    const [version] = await manager.sql<{ version: string }[]>`
      select authorization_version::text as version from oauth_clients where id = ${client.id}`;
    expect(version?.version).toBe("2");
    expect((await auditRows(client.clientId, "client.grant-removed")).map((row) => row.result)).toEqual([
      "success",
      "failure",
    ]);
  });
});

describe("deleting a client", () => {
  it("ends its grants and tokens and signs it alone out, by back-channel; the session's other client stays", async () => {
    const uri = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/deleted-app`;
    const app = await created({
      name: "Doomed app",
      type: "confidential",
      grantTypes: ["authorization_code", "refresh_token"],
      redirectUris: ["http://127.0.0.1:9/callback"],
      backchannelLogoutUri: uri,
      firstParty: true,
      resources: [ACCOUNT_PORTAL_AUDIENCE],
    });
    const doomed: TestClient = {
      clientId: app.clientId,
      clientSecret: app.clientSecret as string,
      redirectUri: "http://127.0.0.1:9/callback",
    };
    const member = await createTestAccount(manager.sql);
    const stays = await signInAs(manager.issuerUrl, portalClient, member, PORTAL);
    const goes = await signInAs(
      manager.issuerUrl,
      doomed,
      member,
      PORTAL,
      "openid offline_access",
      stays.session,
    );
    expect((await call(goes.accessToken, "GET", "/api/v1/me")).status).toBe(200);

    const deleted = await call(adminToken, "DELETE", `${BASE}/${app.id}`);
    expect(deleted.status).toBe(204);
    expect((await call(goes.accessToken, "GET", "/api/v1/me", undefined, replica.baseUrl)).status).toBe(401);
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: doomed.clientId,
        clientSecret: doomed.clientSecret,
        refreshToken: goes.refreshToken as string,
        resource: PORTAL,
      }),
    ).rejects.toThrow();
    await waitFor(
      "the deleted client's back-channel logout",
      async () => logouts.get("/deleted-app") === 1,
      10_000,
    );
    expect((await call(stays.accessToken, "GET", "/api/v1/me")).status).toBe(200);
    expect((await call(adminToken, "GET", `${BASE}/${app.id}`)).status).toBe(404);
    expect((await call(adminToken, "DELETE", `${BASE}/${app.id}`)).status).toBe(404);
    expect((await auditRows(app.clientId, "client.deleted")).map((row) => row.result)).toEqual(["success"]);
  });
});

describe("a client's resources, roles, users and directory sources", () => {
  it("resources: an unlisted one is invalid_target at the provider; the list is the grants' table", async () => {
    const client = await created(confidential("Resources"));
    const operations = resourceIndicator("tjm-operations");
    const credentials = {
      clientId: client.clientId,
      clientSecret: client.clientSecret as string,
      redirectUri: "",
    };
    await expect(clientToken(manager.issuerUrl, credentials, operations)).rejects.toMatchObject({
      code: "invalid_target",
    });
    const added = await call(adminToken, "POST", `${BASE}/${client.clientId}/resources`, {
      resource: "tjm-operations",
    });
    expect(await added.json()).toEqual({ items: ["account-portal", "tjm-operations"] });
    expect(
      (await clientToken(manager.issuerUrl, credentials, operations)).claims.tjm_authorization_version,
    ).toBe(2);
    const grants = await (await call(adminToken, "GET", `${BASE}/${client.id}/oauth-grants`)).json();
    expect(grants.grants.map((grant: { resource: string }) => grant.resource)).toEqual([
      "account-portal",
      "tjm-operations",
    ]);
    expect((await call(adminToken, "DELETE", `${BASE}/${client.id}/resources/tjm-operations`)).status).toBe(
      204,
    );
    await expect(clientToken(manager.issuerUrl, credentials, operations)).rejects.toMatchObject({
      code: "invalid_target",
    });
    const unknown = await call(adminToken, "POST", `${BASE}/${client.id}/resources`, {
      resource: "elsewhere",
    });
    expect((await unknown.json()).details[0].code).toBe("client.resource_unknown");
    expect((await call(adminToken, "DELETE", `${BASE}/${client.id}/resources/tjm-operations`)).status).toBe(
      404,
    );
    expect(await auditRows(client.clientId, "client.nested-added")).toEqual([
      expect.objectContaining({
        result: "success",
        details: { collection: "resources", key: "tjm-operations" },
      }),
      expect.objectContaining({ result: "failure", details: { reason: "validation.failed" } }),
    ]);
  });

  it("users, directory sources and roles are enforced at the provider", async () => {
    const app = await created({
      name: "Restricted",
      type: "public",
      grantTypes: ["authorization_code", "refresh_token"],
      redirectUris: ["http://127.0.0.1:9/callback"],
      firstParty: true,
      resources: [ACCOUNT_PORTAL_AUDIENCE],
    });
    const restricted: TestClient = {
      clientId: app.clientId,
      clientSecret: undefined,
      redirectUri: "http://127.0.0.1:9/callback",
    };
    const [listed, other] = await Promise.all([
      createTestAccount(manager.sql, { roles: ["operator", "client-admin"] }),
      createTestAccount(manager.sql),
    ]);
    // Roles: none listed, none in tokens; then only the listed one.
    expect((await signInAs(manager.issuerUrl, restricted, listed, PORTAL)).claims.roles).toEqual([]);
    await call(adminToken, "POST", `${BASE}/${app.id}/roles`, { role: "client-admin" });
    expect((await signInAs(manager.issuerUrl, restricted, listed, PORTAL)).claims.roles).toEqual([
      "client-admin",
    ]);
    expect((await call(adminToken, "POST", `${BASE}/${app.id}/roles`, { role: "owner" })).status).toBe(400);

    // Users: only the listed account may use it.
    const addUser = await call(adminToken, "POST", `${BASE}/${app.id}/users`, {
      accountId: listed.accountId,
    });
    expect(await addUser.json()).toEqual({ items: [listed.accountId] });
    await expect(signInAs(manager.issuerUrl, restricted, other, PORTAL)).rejects.toMatchObject({
      code: "access_denied",
    });
    const kept = await signInAs(manager.issuerUrl, restricted, listed, PORTAL);
    const unknownAccount = await call(adminToken, "POST", `${BASE}/${app.id}/users`, {
      accountId: crypto.randomUUID(),
    });
    expect((await unknownAccount.json()).details[0].code).toBe("client.account_unknown");

    // Directory sources: without built-in, TJM's own accounts are refused, at refresh too.
    await call(adminToken, "POST", `${BASE}/${app.id}/directory-sources`, { source: "operator-issuer" });
    await expect(signInAs(manager.issuerUrl, restricted, listed, PORTAL)).rejects.toMatchObject({
      code: "access_denied",
    });
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: app.clientId,
        refreshToken: kept.refreshToken as string,
      }),
    ).rejects.toMatchObject({ code: "invalid_grant" });
    expect(
      (await call(adminToken, "DELETE", `${BASE}/${app.id}/directory-sources/operator-issuer`)).status,
    ).toBe(204);
    expect(await (await call(adminToken, "GET", `${BASE}/${app.id}/directory-sources`)).json()).toEqual({
      items: [],
    });
    expect((await signInAs(manager.issuerUrl, restricted, listed, PORTAL)).accessToken).toBeTruthy();
    expect((await call(adminToken, "DELETE", `${BASE}/${app.id}/users/${other.accountId}`)).status).toBe(404);
  });
});
