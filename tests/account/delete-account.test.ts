/**
 * DELETE /api/v1/me: refused without a recent sign-in (a real token whose auth_time is older
 * than the window); otherwise the account goes with its sessions (each client with a sid in one
 * sent a back-channel logout), grants, tokens and developer apps, while its audit rows stay; its
 * e-mail address can be used again (`accounts create`), and its tokens are refused.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { runScript } from "@tjm/devstack/manager-process";
import { refresh } from "@tjm/devstack/oidc-client";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { createTestClient, TEST_PASSWORD } from "../harness/identity.ts";
import { commandEnv, TestManager } from "../harness/manager.ts";
import { auditRows, PORTAL_RESOURCE, Portal, sessionUid } from "./portal.ts";

let manager: TestManager;
let portal: Portal;
let receiver: Server;
let logoutsReceived = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    logoutsReceived++;
    req.resume();
    res.writeHead(200).end();
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  manager = await TestManager.start({ env: { PROVIDER_PRIVATE_NETWORK_HOSTS: "127.0.0.1" } });
  portal = await Portal.start(manager);
});
afterAll(async () => {
  receiver?.closeAllConnections();
  receiver?.close();
  await manager?.close();
});

describe("deleting the account", () => {
  it("refuses a token whose sign-in is older than REAUTHENTICATION_MAX_AGE_SECONDS, audits it, deletes nothing", async () => {
    const account = await portal.account();
    const first = await portal.signIn(account);
    // The sign-in happened ten minutes ago, as the provider's session records it; the browser
    // then authorizes again without signing in, and gets a real token with that auth_time.
    await manager.sql`
      update oidc_records set payload = jsonb_set(payload, '{loginTs}', to_jsonb(extract(epoch from now())::int - 600))
      where model = 'Session' and uid = ${await sessionUid(manager.sql, first)}`;
    const stale = await portal.signIn(account, first.session);
    expect(stale.claims.auth_time).toBeLessThan(Date.now() / 1000 - 590);

    const response = await portal.request(stale.accessToken, "DELETE", "/api/v1/me");
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: "auth.reauthentication_required", maxAge: 300 });
    expect(await portal.answer(stale)).toBe(200);
    expect(await auditRows(manager.sql, account.accountId, "account.deleted")).toEqual([
      {
        result: "failure",
        clientId: portal.client.clientId,
        details: { via: "portal", accountId: account.accountId, reason: "reauthentication required" },
      },
    ]);
  });

  it("ends its sessions, grants and developer apps, keeps its audit rows, frees its address and refuses its tokens", async () => {
    const app = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE], name: "app" });
    await manager.sql`
      update oauth_clients set backchannel_logout_uri = ${`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/app`}
      where client_id = ${app.clientId}`;
    const account = await portal.account();
    const elsewhere = await portal.signIn(account);
    const inApp = await portal.signIn(account, elsewhere.session, app);
    const fresh = await portal.signIn(account);
    const developerApp = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
    await manager.sql`update oauth_clients set owner_account_id = ${account.accountId} where client_id = ${developerApp.clientId}`;
    await portal.request(fresh.accessToken, "DELETE", "/api/v1/me/sessions/no-such-session");

    const response = await portal.request(fresh.accessToken, "DELETE", "/api/v1/me");
    expect(response.status).toBe(204);

    for (const tokens of [fresh, elsewhere, inApp]) expect(await portal.answer(tokens)).toBe(401);
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: app.clientId,
        refreshToken: inApp.refreshToken as string,
        resource: PORTAL_RESOURCE,
      }),
    ).rejects.toMatchObject({ code: "invalid_grant" });
    await waitFor("the app's back-channel logout", async () => logoutsReceived === 1, 5_000);
    expect(await manager.sql`select from oidc_records where account_id = ${account.accountId}`).toEqual([]);
    expect(await manager.sql`select from browser_sessions where account_id = ${account.accountId}`).toEqual(
      [],
    );
    expect(await manager.sql`select from oauth_clients where client_id = ${developerApp.clientId}`).toEqual(
      [],
    );
    expect(await manager.sql`select from accounts where id = ${account.accountId}`).toEqual([]);

    // The trail stays, naming the account by id: the refusal before, and the deletion.
    expect(
      (await auditRows(manager.sql, account.accountId, "session.revoked")).map((row) => row.result),
    ).toEqual(["failure"]);
    expect(await auditRows(manager.sql, account.accountId, "account.deleted")).toEqual([
      {
        result: "success",
        clientId: portal.client.clientId,
        details: {
          via: "portal",
          accountId: account.accountId,
          sessionsEnded: 2,
          grantsRevoked: 3,
          backchannelLogoutsQueued: 1,
          developerAppsDeleted: [developerApp.clientId],
        },
      },
    ]);

    const created = await runScript(
      ["manager", "--", "accounts", "create", "--email", account.email.toUpperCase(), "--name", "Again"],
      commandEnv(manager.schema),
      `${TEST_PASSWORD}\n`,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).accountId).not.toBe(account.accountId);
  }, 60_000);

  it("leaves nothing behind that references an account: every foreign key to accounts cascades or is set null", async () => {
    // A table added later (factors, recovery codes …) must follow, or deleting an account fails.
    const keys = await manager.sql<{ table: string; rule: string }[]>`
      select c.conrelid::regclass::text as table,
        case c.confdeltype when 'c' then 'cascade' when 'n' then 'set null' else 'restrict' end as rule
      from pg_constraint c
      where c.contype = 'f' and c.confrelid = ${`${manager.schema}.accounts`}::regclass`;
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key) => key.rule === "restrict")).toEqual([]);
  });
});
