/**
 * Developer apps (/api/v1/me/developer-apps): an account creates, lists, reads, replaces,
 * rotates and deletes OAuth clients of its own under the developer-app rules (each refusal a
 * 400 with its code, at most 10), the provider gives them only openid profile email and no TJM
 * resource, another account's app is 404 on every route, only account-portal tokens are
 * accepted, and deleting the account deletes its apps.
 */
import { OAuthError, signIn } from "@tjm/devstack/oidc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import {
  clientToken,
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { PORTAL_RESOURCE, Portal } from "./portal.ts";

const APPS = "/api/v1/me/developer-apps";

let manager: TestManager;
let portal: Portal;
let ada: TestAccount;
let adaToken: string;
let bobToken: string;

beforeAll(async () => {
  manager = await TestManager.start();
  portal = await Portal.start(manager);
  [ada] = await Promise.all([portal.account()]);
  const bob = await portal.account();
  [adaToken, bobToken] = await Promise.all([
    portal.signIn(ada).then((tokens) => tokens.accessToken),
    portal.signIn(bob).then((tokens) => tokens.accessToken),
  ]);
}, 60_000);
afterAll(() => manager?.close());

const webApp = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "confidential",
  grantTypes: ["authorization_code"],
  redirectUris: ["https://app.example.com/callback"],
  ...extra,
});

async function createApp(token: string, body: unknown) {
  const response = await portal.request(token, "POST", APPS, body);
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json();
}

describe("developer apps", () => {
  it("creates, reads, lists, replaces and rotates the account's own app; its secret once", async () => {
    const response = await portal.request(adaToken, "POST", APPS, webApp("Reading list"));
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const app = await response.json();
    expect(app).toMatchObject({
      name: "Reading list",
      type: "confidential",
      applicationType: "web",
      scopes: ["openid", "profile", "email"],
      clientSecret: expect.stringMatching(/^tjm_cs_/),
    });
    const read = await (await portal.request(adaToken, "GET", `${APPS}/${app.clientId}`)).json();
    expect(read).not.toHaveProperty("clientSecret");
    const listed = await (await portal.request(adaToken, "GET", APPS)).json();
    expect(listed.apps.map((item: { id: string }) => item.id)).toContain(app.id);
    expect(listed.limit).toBe(10);

    const replaced = await portal.request(adaToken, "PUT", `${APPS}/${app.id}`, {
      ...webApp("Reading list 2"),
      applicationType: "native",
      redirectUris: ["http://127.0.0.1:7777/cb"],
      scopes: ["openid", "email"],
    });
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toMatchObject({
      name: "Reading list 2",
      applicationType: "native",
      scopes: ["openid", "email"],
    });
    const rotated = await portal.request(adaToken, "POST", `${APPS}/${app.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("cache-control")).toBe("no-store");
    expect((await rotated.json()).clientSecret).not.toBe(app.clientSecret);
  });

  it("refuses each rule with its code", async () => {
    const response = await portal.request(adaToken, "POST", APPS, {
      name: "Greedy",
      type: "confidential",
      grantTypes: ["authorization_code", "client_credentials"],
      redirectUris: ["http://app.example.com/cb", "http://127.0.0.1:8080/cb"],
      scopes: ["openid", "offline_access"],
      firstParty: true,
      resources: ["account-portal"],
    });
    expect(response.status).toBe(400);
    const codes = (await response.json()).details.map((detail: { code: string }) => detail.code).sort();
    expect(codes).toEqual(
      [
        "developer.scope_not_allowed",
        "developer.first_party_not_allowed",
        "developer.resource_not_allowed",
        "developer.client_credentials_not_allowed",
        "developer.redirect_uri_not_https",
        // The clients' own rule refuses http anywhere but on a loopback address.
        "client.redirect_uri_invalid",
      ].sort(),
    );
    const native = await portal.request(adaToken, "POST", APPS, {
      ...webApp("Native"),
      applicationType: "native",
      redirectUris: ["http://127.0.0.1:8080/cb"],
    });
    expect(native.status).toBe(201);
  });

  it("refuses redirect URIs with userinfo, a wildcard, a space or a form the URL parser rewrites", async () => {
    const refused = [
      "https://user:pw@app.example.com/cb",
      "https://app.example.com@evil.example/cb",
      "https://*.app.example.com/cb",
      "https://app.example.com/c b",
      "https:/app.example.com/cb",
    ];
    for (const applicationType of ["web", "native"]) {
      const response = await portal.request(adaToken, "POST", APPS, {
        ...webApp("Loose URIs"),
        applicationType,
        redirectUris: refused,
      });
      expect(response.status, applicationType).toBe(400);
      expect((await response.json()).details).toEqual(
        refused.map((uri) => ({
          path: "redirectUris",
          message: expect.stringContaining(uri),
          code: "client.redirect_uri_invalid",
        })),
      );
    }
  });

  it("refuses a name that shows nothing or carries a bidirectional override, keeping ZWNJ", async () => {
    for (const [name, code] of [
      ["\u200b\u200d", "name.invisible"],
      ["Reading\u202elist", "name.bidi_override"],
    ] as const) {
      const response = await portal.request(adaToken, "POST", APPS, webApp(name));
      expect(response.status, name).toBe(400);
      expect((await response.json()).details).toEqual([{ path: "name", message: expect.any(String), code }]);
    }
    expect((await createApp(adaToken, webApp("فهرست\u200cخواندن"))).name).toBe("فهرست\u200cخواندن");
  });

  it("stops at 10 apps per account", async () => {
    const carol = await portal.account();
    const token = (await portal.signIn(carol)).accessToken;
    for (let count = 0; count < 10; count++) await createApp(token, webApp(`App ${count}`));
    const refused = await portal.request(token, "POST", APPS, webApp("Eleventh"));
    expect(refused.status).toBe(400);
    expect((await refused.json()).details).toEqual([
      expect.objectContaining({ code: "developer.limit_reached" }),
    ]);
  });

  it("another account's app is 404 on every route", async () => {
    const app = await createApp(adaToken, webApp("Private"));
    for (const [method, path, body] of [
      ["GET", `${APPS}/${app.id}`],
      ["PUT", `${APPS}/${app.clientId}`, webApp("Taken over")],
      ["POST", `${APPS}/${app.id}/rotate-secret`, {}],
      ["DELETE", `${APPS}/${app.id}`],
    ] as const) {
      const response = await portal.request(bobToken, method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    const bobs = await (await portal.request(bobToken, "GET", APPS)).json();
    expect(bobs.apps).toEqual([]);
    expect((await portal.request(adaToken, "GET", `${APPS}/${app.id}`)).status).toBe(200);
  });

  it("accepts only account-portal tokens", async () => {
    const admin = await createTestAccount(manager.sql, { roles: ["client-admin"] });
    const consoleClient = await createTestClient(manager.sql, { resources: [ADMIN_CONSOLE_AUDIENCE] });
    const adminToken = (
      await signInAs(manager.issuerUrl, consoleClient, admin, resourceIndicator(ADMIN_CONSOLE_AUDIENCE))
    ).accessToken;
    const external = await manager.operatorToken();
    for (const [token, status] of [
      [undefined, 401],
      [adminToken, 403],
      [external, 403],
    ] as const) {
      expect((await portal.request(token, "GET", APPS)).status).toBe(status);
      expect((await portal.request(token, "POST", APPS, webApp("No"))).status).toBe(status);
    }
  });

  it("gets only openid profile email at the provider, no TJM resource", async () => {
    const app = await createApp(
      adaToken,
      webApp("Third party", { redirectUris: ["https://127.0.0.1:9/callback"] }),
    );
    const user = await portal.account();
    const client = {
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      redirectUri: "https://127.0.0.1:9/callback",
    };
    await expect(
      signIn({
        issuer: manager.issuerUrl,
        ...client,
        resource: PORTAL_RESOURCE,
        email: user.email,
        password: user.password,
      }),
    ).rejects.toBeInstanceOf(OAuthError);
    await expect(clientToken(manager.issuerUrl, client, PORTAL_RESOURCE)).rejects.toBeInstanceOf(OAuthError);
    const [row] = await manager.sql<{ firstParty: boolean; metadata: { scope: string } }[]>`
      select first_party, metadata from oauth_clients where client_id = ${app.clientId}`;
    expect(row).toEqual({
      firstParty: false,
      metadata: expect.objectContaining({ scope: "openid profile email" }),
    });
  });

  it("deleting the account deletes its apps", async () => {
    const dave = await portal.account();
    const token = (await portal.signIn(dave)).accessToken;
    const app = await createApp(token, webApp("Leaves with its owner"));
    expect((await portal.request(token, "DELETE", "/api/v1/me")).status).toBe(204);
    const rows = await manager.sql`select 1 from oauth_clients where client_id = ${app.clientId}`;
    expect(rows).toHaveLength(0);
  });

  it("deletes an app, refusing its tokens", async () => {
    const app = await createApp(adaToken, webApp("Short-lived"));
    expect((await portal.request(adaToken, "DELETE", `${APPS}/${app.id}`)).status).toBe(204);
    expect((await portal.request(adaToken, "GET", `${APPS}/${app.id}`)).status).toBe(404);
    const [row] = await manager.sql<{ event: string; result: string }[]>`
      select event, result from audit_events where client_id = ${app.clientId} and event = 'client.deleted'`;
    expect(row).toEqual({ event: "client.deleted", result: "success" });
  });
});
