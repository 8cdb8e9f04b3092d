/**
 * One route factory per audience (identity/tokens/audiences.ts): each audience's token, minted
 * by the real built-in provider, is accepted by its own audience's routes and refused (403) by
 * every other audience's. The probe app has no path guard: the factories alone protect it.
 */
import { z } from "@hono/zod-openapi";
import { OPERATIONS_AUDIENCE, TENANT_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { silentLogger } from "@tjm/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import {
  accountRoute,
  clientAdminRoute,
  operatorRoute,
  provideAuthenticator,
  tenantRoute,
} from "../../manager/src/identity/tokens/audiences.ts";
import type { Audience } from "../../manager/src/identity/tokens/principals.ts";
import { tokenStanding } from "../../manager/src/identity/tokens/standing.ts";
import { createTokenAuth } from "../../manager/src/identity/tokens/verify.ts";
import { createErrorHandler } from "../../manager/src/platform/errors.ts";
import { createRouter, requestId } from "../../manager/src/platform/http.ts";
import { jsonResponse } from "../../manager/src/platform/routes.ts";
import {
  clientToken,
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const Principal = z.record(z.string(), z.unknown());
const probe = (path: string) => ({
  method: "get" as const,
  path,
  summary: `Probe of ${path}`,
  responses: { 200: jsonResponse("The principal", Principal) },
  errors: [],
});
const ROUTES = {
  operator: operatorRoute(probe("/operator")),
  tenant: tenantRoute(probe("/tenant")),
  account: accountRoute(probe("/account")),
  clientAdmin: clientAdminRoute(probe("/client-admin")),
};
const AUDIENCES = Object.keys(ROUTES) as Audience[];

let manager: TestManager;
let app: ReturnType<typeof createRouter>;
/** Each audience's token, and one of the admin console for an account that has lost the client-admin role. */
const tokens = {} as Record<Audience | "adminConsoleWithoutRole", string>;
let signedInAccount: { accountId: string; clientId: string };

beforeAll(async () => {
  manager = await TestManager.start();
  const auth = createTokenAuth({
    tjm: { issuer: manager.issuerUrl },
    logger: silentLogger,
    standing: (claims, resource) => tokenStanding(manager.sql, claims, resource),
  });
  app = createRouter();
  app.onError(createErrorHandler(silentLogger));
  app.use("*", requestId);
  app.use(
    "*",
    provideAuthenticator(auth.audiences({ operations: OPERATIONS_AUDIENCE, tenant: TENANT_AUDIENCE })),
  );
  app.openapi(ROUTES.operator, (c) => c.json({ subject: c.get("operator").subject }, 200));
  app.openapi(ROUTES.tenant, (c) => c.json({ ...c.get("tenant") }, 200));
  app.openapi(ROUTES.account, (c) =>
    c.json({ ...c.get("account"), authenticatedAt: c.get("account").authenticatedAt ?? null }, 200),
  );
  app.openapi(ROUTES.clientAdmin, (c) =>
    c.json({ ...c.get("clientAdmin"), authenticatedAt: c.get("clientAdmin").authenticatedAt ?? null }, 200),
  );

  const { projectId } = await manager.createProject();
  const interactive = async (audience: string, roles: ("operator" | "client-admin")[]) => {
    const account = await createTestAccount(manager.sql, { roles });
    const client = await createTestClient(manager.sql, { resources: [audience] });
    const signedIn = await signInAs(manager.issuerUrl, client, account, resourceIndicator(audience));
    return { token: signedIn.accessToken, accountId: account.accountId, clientId: client.clientId };
  };
  const tenantClient = await createTestClient(manager.sql, {
    resources: [TENANT_AUDIENCE],
    grantTypes: ["client_credentials"],
    projectIds: [projectId],
  });
  const [operator, account, clientAdmin, withoutRole, tenant] = await Promise.all([
    interactive(OPERATIONS_AUDIENCE, ["operator"]),
    interactive(ACCOUNT_PORTAL_AUDIENCE, []),
    interactive(ADMIN_CONSOLE_AUDIENCE, ["client-admin"]),
    // The provider gives admin-console tokens only to client admins: the role goes after the sign-in.
    interactive(ADMIN_CONSOLE_AUDIENCE, ["client-admin"]).then(async (signedIn) => {
      await manager.sql`delete from account_roles where account_id = ${signedIn.accountId} and role = 'client-admin'`;
      return signedIn;
    }),
    clientToken(manager.issuerUrl, tenantClient, resourceIndicator(TENANT_AUDIENCE)),
  ]);
  Object.assign(tokens, {
    operator: operator.token,
    tenant: tenant.accessToken,
    account: account.token,
    clientAdmin: clientAdmin.token,
    adminConsoleWithoutRole: withoutRole.token,
  });
  signedInAccount = account;
}, 60_000);
afterAll(() => manager?.close());

const PATHS: Record<Audience, string> = {
  operator: "/operator",
  tenant: "/tenant",
  account: "/account",
  clientAdmin: "/client-admin",
};

async function call(audience: Audience, token?: string) {
  const response = await app.request(PATHS[audience], {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("a route factory per audience", () => {
  it("accepts each audience's token on its own routes and refuses it (403) on every other's", async () => {
    const table: string[] = [];
    for (const holder of AUDIENCES) {
      for (const route of AUDIENCES) {
        const { status } = await call(route, tokens[holder]);
        table.push(`${holder} token on ${route} route: ${status}`);
      }
    }
    expect(table).toEqual(
      AUDIENCES.flatMap((holder) =>
        AUDIENCES.map((route) => `${holder} token on ${route} route: ${holder === route ? 200 : 403}`),
      ),
    );
  });

  it("refuses a request without a token (401) on every audience's routes", async () => {
    for (const audience of AUDIENCES) expect((await call(audience)).status, audience).toBe(401);
  });

  it("gives an account route the account, its session and its client", async () => {
    const { status, body } = await call("account", tokens.account);
    expect(status).toBe(200);
    expect(body).toEqual({
      accountId: signedInAccount.accountId,
      sessionId: expect.any(String),
      clientId: signedInAccount.clientId,
      authenticatedAt: expect.any(Number),
    });
  });

  it("refuses an admin-console token of an account without the client-admin role (403)", async () => {
    const { status, body } = await call("clientAdmin", tokens.adminConsoleWithoutRole);
    expect(status).toBe(403);
    expect(body.message).toMatch(/client-admin role/);
  });
});
