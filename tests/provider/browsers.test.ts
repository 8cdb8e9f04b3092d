/**
 * The browser-level set of provider sessions: a sign-in records which browser (known by its own
 * long-lived cookie, stored as an HMAC) holds which account's provider session, so the account
 * portal can list and log out every account one browser remembers.
 */
import { createHmac } from "node:crypto";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deriveKey } from "../../manager/src/provider/keys.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  TEST_PROVIDER_KEY_ENCRYPTION_KEY,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

let manager: TestManager;

beforeAll(async () => {
  manager = await TestManager.start();
});
afterAll(() => manager?.close());

describe("a browser's sign-ins", () => {
  it("are recorded per provider session under the browser's cookie, whose value the database never holds", async () => {
    const account = await createTestAccount(manager.sql, { roles: ["operator"] });
    const client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
    const first = await signInAs(manager.issuerUrl, client, account, resourceIndicator(OPERATIONS_AUDIENCE));

    const cookie = first.session.list().find((stored) => stored.name === "tjm_browser");
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie?.path).toBe("/oidc");
    const hmac = createHmac("sha256", deriveKey(TEST_PROVIDER_KEY_ENCRYPTION_KEY, "browser cookies"))
      .update(cookie?.value ?? "")
      .digest("base64url");
    const rows = await manager.sql<{ cookieHmac: string; accountId: string; sessionUid: string }[]>`
      select b.cookie_hmac, s.account_id, s.session_uid
      from browser_sessions s join browsers b on b.id = s.browser_id`;
    expect(rows).toEqual([
      { cookieHmac: hmac, accountId: account.accountId, sessionUid: expect.any(String) },
    ]);
    // The row names the provider session the account signed in with.
    const [session] = await manager.sql`
      select account_id from oidc_records where model = 'Session' and uid = ${rows[0]?.sessionUid ?? ""}`;
    expect(session).toEqual({ accountId: account.accountId });
    const everything = JSON.stringify(await manager.sql`select * from browsers`);
    expect(everything).not.toContain(cookie?.value);

    // The same browser authorizing again (its session remembered) keeps one row.
    await signInAs(
      manager.issuerUrl,
      client,
      account,
      resourceIndicator(OPERATIONS_AUDIENCE),
      "openid",
      first.session,
    );
    expect(await manager.sql`select count(*)::int as n from browser_sessions`).toEqual([{ n: 1 }]);
    expect(await manager.sql`select count(*)::int as n from browsers`).toEqual([{ n: 1 }]);
  });
});
