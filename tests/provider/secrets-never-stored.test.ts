/**
 * No row and no log line holds a password, a client secret, a code or a token (issue 12 §5):
 * a sign-in (after a wrong one), a refresh, a client_credentials issuance, requests with the
 * tokens and a logout run against a Manager whose every log line is kept; then every table, the
 * audit trail included, and every line are searched for the values used. oidc_records is the
 * provider's store of codes and tokens, so there only passwords and the client secret are sought.
 */
import {
  BrowserSession,
  endSessionUrl,
  finishAuthorization,
  parseForms,
  refresh,
  startAuthorization,
} from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE, TENANT_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { createLogger } from "@tjm/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientToken, createTestAccount, createTestClient, resourceIndicator } from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { postSignInForm } from "./provider-requests.ts";

const lines: string[] = [];
let manager: TestManager;
/** The provider's records as they were before the logout revoked the grant. */
let recordsBeforeLogout = "";

/** Every value the scenario used that must never be stored or logged, by what it is. */
const passwords = new Map<string, string>();
const credentials = new Map<string, string>();

beforeAll(async () => {
  manager = await TestManager.start({ logger: createLogger("debug", (line) => lines.push(line)) });
  await runScenario();
}, 60_000);
afterAll(() => manager?.close());

async function runScenario(): Promise<void> {
  // Spaces and symbols, so a form- or percent-encoded copy differs from the plain one.
  const password = `pass word ${crypto.randomUUID()} &+%`;
  const wrongPassword = `wrong word ${crypto.randomUUID()} &+%`;
  passwords.set("password", password);
  passwords.set("wrong password", wrongPassword);
  const account = await createTestAccount(manager.sql, { roles: ["operator"], password });
  const client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
  const resource = resourceIndicator(OPERATIONS_AUDIENCE);

  const pending = await startAuthorization({
    issuer: manager.issuerUrl,
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    resource,
    scope: "openid offline_access",
  });
  const wrong = await postSignInForm(pending, { email: account.email, password: wrongPassword });
  expect(wrong.alert).toBeDefined();
  // The same form posted from another browser, which lacks the interaction's cookie: refused,
  // and the refusal is logged (at debug), on a path that holds the password.
  const page = pending.page as { html: string; url: URL };
  const login = parseForms(page.html, page.url).find((candidate) => "password" in candidate.fields);
  const elsewhere = await new BrowserSession().fetch(login?.action as string, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: account.email, password }),
  });
  expect(elsewhere.status).toBe(400);
  const signedIn = await finishAuthorization(pending, { email: account.email, password });
  credentials.set("authorization code", pending.callbackUrl?.searchParams.get("code") as string);
  credentials.set("access token", signedIn.accessToken);
  credentials.set("id token", signedIn.idToken as string);
  credentials.set("refresh token", signedIn.refreshToken as string);

  const refreshed = await refresh({
    issuer: manager.issuerUrl,
    clientId: client.clientId,
    refreshToken: signedIn.refreshToken as string,
    resource,
  });
  credentials.set("refreshed access token", refreshed.accessToken);
  credentials.set("refreshed id token", refreshed.idToken as string);
  credentials.set("rotated refresh token", refreshed.refreshToken as string);

  const { projectId } = await manager.createProject();
  const tenant = await createTestClient(manager.sql, {
    resources: [TENANT_AUDIENCE],
    grantTypes: ["client_credentials"],
    projectIds: [projectId],
  });
  credentials.set("client secret", tenant.clientSecret as string);
  const tenantTokens = await clientToken(manager.issuerUrl, tenant, resourceIndicator(TENANT_AUDIENCE));
  credentials.set("client_credentials access token", tenantTokens.accessToken);

  const job = `/api/v1/operations/jobs/${crypto.randomUUID()}`;
  const authorized = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  expect((await manager.request(job, authorized(refreshed.accessToken))).status).toBe(404);
  expect(
    (await manager.request(`${job}?token=${signedIn.accessToken}`, authorized("not-a-token"))).status,
  ).toBe(401);

  recordsBeforeLogout = (await tableTexts()).get("oidc_records") ?? "";
  const logoutUrl = await endSessionUrl({
    issuer: manager.issuerUrl,
    clientId: client.clientId,
    idTokenHint: signedIn.idToken,
  });
  const logoutPage = await signedIn.session.fetch(logoutUrl);
  const form = parseForms(await logoutPage.text(), logoutUrl).find((candidate) =>
    candidate.action.endsWith("/session/end/confirm"),
  );
  if (!form) throw new Error("no logout confirmation form");
  const confirmed = await signedIn.session.fetch(form.action, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...form.fields, logout: "yes" }),
  });
  expect(confirmed.status).toBe(303);
  expect((await manager.request(job, authorized(refreshed.accessToken))).status).toBe(401);

  // The audit rows the scenario writes asynchronously (the logout's) land before the search.
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const [row] = await manager.sql`select from audit_events where event = 'auth.logout'`;
    if (row) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Each way a value can be written down: as is, form-encoded, percent-encoded, JSON-escaped. */
function spellings(value: string): string[] {
  const forms = [
    value,
    new URLSearchParams({ v: value }).toString().slice(2),
    encodeURIComponent(value),
    JSON.stringify(value).slice(1, -1),
  ];
  // A JWT's signature alone is as secret as the whole token; its header is shared by many.
  const parts = value.split(".");
  if (parts.length === 3 && (parts[2] as string).length > 20) forms.push(parts[2] as string);
  return [...new Set(forms)];
}

function found(text: string, secrets: Map<string, string>): string[] {
  return [...secrets].flatMap(([what, value]) =>
    spellings(value).some((spelling) => text.includes(spelling)) ? [what] : [],
  );
}

async function tableTexts(): Promise<Map<string, string>> {
  const tables = await manager.sql<{ tableName: string }[]>`
    select table_name from information_schema.tables
    where table_schema = ${manager.schema} and table_type = 'BASE TABLE' order by table_name`;
  const texts = new Map<string, string>();
  for (const { tableName } of tables) {
    const [row] = await manager.sql<{ text: string }[]>`
      select coalesce(string_agg(t::text, E'\\n'), '') as text from ${manager.sql(manager.schema)}.${manager.sql(tableName)} t`;
    texts.set(tableName, row?.text ?? "");
  }
  return texts;
}

describe("after sign-ins, a refresh, client credentials and a logout", () => {
  it("ran the whole scenario: each value to look for is known, and the audit trail has its rows", async () => {
    expect([...passwords.keys(), ...credentials.keys()]).toHaveLength(11);
    for (const value of [...passwords.values(), ...credentials.values()]) {
      expect(value).toEqual(expect.any(String));
      expect(value.length).toBeGreaterThan(20);
    }
    const events = await manager.sql<{ event: string; result: string }[]>`
      select event, result from audit_events where event like 'auth.%' order by id`;
    expect(events).toEqual(
      expect.arrayContaining([
        { event: "auth.sign-in", result: "failure" },
        { event: "auth.sign-in", result: "success" },
        { event: "auth.logout", result: "success" },
      ]),
    );
  });

  it("no table but the provider's records holds a password, the client secret, the code or a token", async () => {
    const all = new Map([...passwords, ...credentials]);
    const texts = await tableTexts();
    expect(texts.get("audit_events")).not.toBe("");
    const leaks = [...texts]
      .filter(([table]) => table !== "oidc_records")
      .flatMap(([table, text]) => found(text, all).map((what) => `${what} in ${table}`));
    expect(leaks).toEqual([]);
  });

  it("the provider's records hold no password and no client secret, before the logout or after", async () => {
    // Its refresh tokens are there until the logout, as the provider's store: the search finds them.
    expect(found(recordsBeforeLogout, credentials)).toContain("rotated refresh token");
    const secrets = new Map([...passwords, ["client secret", credentials.get("client secret") as string]]);
    expect(found(recordsBeforeLogout, secrets)).toEqual([]);
    expect(found((await tableTexts()).get("oidc_records") ?? "", secrets)).toEqual([]);
  });

  it("no log line holds a password, the client secret, the code or a token", () => {
    expect(lines.some((line) => line.includes("interaction not found"))).toBe(true);
    const leaks = lines.flatMap((line) =>
      found(line, new Map([...passwords, ...credentials])).map((what) => `${what}: ${line.slice(0, 200)}`),
    );
    expect(leaks).toEqual([]);
  });
});
