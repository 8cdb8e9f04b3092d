/**
 * Connected apps (/api/v1/me/connected-apps): the clients an account granted, and revoking one,
 * with two real clients signed in through one browser session, each with a back-channel logout
 * endpoint: the revoked client's grants, refresh tokens and access tokens end and it alone is
 * sent a back-channel logout; the other client and the session stay; another account can
 * neither see nor revoke the account's apps.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { refresh } from "@tjm/devstack/oidc-client";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { createTestClient, type TestClient } from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { auditRows, PORTAL_RESOURCE, Portal } from "./portal.ts";

let manager: TestManager;
let portal: Portal;
let receiver: Server;
const logouts = new Map<string, number>();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    logouts.set(req.url ?? "/", (logouts.get(req.url ?? "/") ?? 0) + 1);
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

/** A client of the portal's resource whose back-channel logout endpoint is the receiver's `/<name>`. */
async function appWithLogout(name: string): Promise<TestClient> {
  const client = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE], name });
  const uri = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/${name}`;
  await manager.sql`
    update oauth_clients set backchannel_logout_uri = ${uri},
      metadata = metadata || '{"backchannel_logout_session_required": true}'
    where client_id = ${client.clientId}`;
  return client;
}

describe("connected apps", () => {
  it("lists the account's apps only, and revoking one ends its tokens and signs it alone out", async () => {
    const [reports, notes] = await Promise.all([appWithLogout("reports"), appWithLogout("notes")]);
    const [ada, bob] = await Promise.all([portal.account(), portal.account()]);
    const adaPortal = await portal.signIn(ada);
    const adaReports = await portal.signIn(ada, adaPortal.session, reports);
    const adaNotes = await portal.signIn(ada, adaPortal.session, notes);
    const bobPortal = await portal.signIn(bob);
    const bobReports = await portal.signIn(bob, bobPortal.session, reports);

    const listed = await portal.request(adaPortal.accessToken, "GET", "/api/v1/me/connected-apps");
    expect(listed.status).toBe(200);
    const { apps } = await listed.json();
    const app = (client: TestClient, name: string) => ({
      clientId: client.clientId,
      name,
      scopes: expect.arrayContaining(["openid"]),
      resources: [{ resource: PORTAL_RESOURCE, scopes: expect.any(Array) }],
      firstUsedAt: expect.any(String),
      lastUsedAt: expect.any(String),
    });
    expect(apps).toHaveLength(3);
    expect(apps).toEqual(
      expect.arrayContaining([
        app(reports, "reports"),
        app(notes, "notes"),
        app(portal.client, "Account portal"),
      ]),
    );
    const bobs = await (
      await portal.request(bobPortal.accessToken, "GET", "/api/v1/me/connected-apps")
    ).json();
    expect(bobs.apps.map((listedApp: { clientId: string }) => listedApp.clientId).sort()).toEqual(
      [reports.clientId, portal.client.clientId].sort(),
    );

    // Bob holds nothing of notes: his revocation is a 404 and Ada's notes stay signed in.
    const foreign = await portal.request(
      bobPortal.accessToken,
      "DELETE",
      `/api/v1/me/connected-apps/${notes.clientId}`,
    );
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).code).toBe("session.client_not_found");
    expect(await portal.answer(adaNotes)).toBe(200);

    const revoked = await portal.request(
      adaPortal.accessToken,
      "DELETE",
      `/api/v1/me/connected-apps/${reports.clientId}`,
    );
    expect(revoked.status).toBe(204);
    expect(await portal.answer(adaReports)).toBe(401);
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: reports.clientId,
        refreshToken: adaReports.refreshToken as string,
        resource: PORTAL_RESOURCE,
      }),
    ).rejects.toMatchObject({ code: "invalid_grant" });
    expect(await portal.answer(adaNotes)).toBe(200);
    expect(await portal.answer(adaPortal)).toBe(200);
    expect(await portal.answer(bobReports)).toBe(200);
    await waitFor("the back-channel logout of reports", async () => logouts.get("/reports") === 1, 5_000);
    expect(logouts.get("/notes")).toBeUndefined();

    const after = await (
      await portal.request(adaPortal.accessToken, "GET", "/api/v1/me/connected-apps")
    ).json();
    expect(after.apps.map((listedApp: { clientId: string }) => listedApp.clientId).sort()).toEqual(
      [notes.clientId, portal.client.clientId].sort(),
    );
    const again = await portal.request(
      adaPortal.accessToken,
      "DELETE",
      `/api/v1/me/connected-apps/${reports.clientId}`,
    );
    expect(again.status).toBe(404);
    expect(
      (await auditRows(manager.sql, ada.accountId, "client.authorization-revoked")).map((row) => row.result),
    ).toEqual(["success", "failure"]);
    expect(
      (await auditRows(manager.sql, bob.accountId, "client.authorization-revoked")).map((row) => row.result),
    ).toEqual(["failure"]);
  });

  it("refuses a client id longer than 255 characters with the validation envelope", async () => {
    const tokens = await portal.signIn(await portal.account());
    const response = await portal.request(
      tokens.accessToken,
      "DELETE",
      `/api/v1/me/connected-apps/${"c".repeat(256)}`,
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: "validation.failed",
      details: [{ path: "client_id", code: "validation.too_big" }],
    });
  });
});
