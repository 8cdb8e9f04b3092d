/**
 * Remembered accounts and logging a whole browser out, with a real Admin console (its client
 * registers a back-channel logout URI): GET /api/v1/me/accounts lists the accounts one browser
 * remembers, and POST /api/v1/me/logout/all ends each one's session in that browser, so their
 * portal tokens are refused at once and the console's sessions end within 5 s, while the same
 * accounts' sessions in other browsers, and other browsers' accounts, stay signed in.
 */
import { BrowserSession, type SignInResult } from "@tjm/devstack/oidc-client";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestAdmin } from "../admin/admin-harness.ts";
import type { TestAccount } from "../harness/identity.ts";
import { auditRows, Portal } from "./portal.ts";

let admin: TestAdmin;
let portal: Portal;

beforeAll(async () => {
  admin = await TestAdmin.start();
  portal = await Portal.start(admin.manager);
});
afterAll(() => admin?.close());

const BROWSER_COOKIE = "tjm_browser";

/** Another provider session of the same browser: it shares the browser's own cookie, not the provider's. */
function sameBrowserAs(browser: BrowserSession): BrowserSession {
  const cookie = browser.list().find((stored) => stored.name === BROWSER_COOKIE);
  if (!cookie) throw new Error("the browser has no browser cookie yet");
  const next = new BrowserSession();
  next.store(admin.manager.issuerUrl, [`${cookie.name}=${cookie.value}; Path=${cookie.path}`]);
  return next;
}

/** Signed in to the console and to the portal in `browser`. */
async function signedIn(
  account: TestAccount,
  browser = new BrowserSession(),
): Promise<{
  browser: BrowserSession;
  portal: SignInResult;
}> {
  await admin.signIn(account, browser);
  return { browser, portal: await portal.signIn(account, browser) };
}

async function consoleStatus(browser: BrowserSession): Promise<number> {
  const response = await admin.request(browser, "/api/session");
  await response.body?.cancel();
  return response.status;
}

describe("the accounts a browser remembers, logged out together", () => {
  it("lists them for each, then ends each one's session in that browser and the console's sessions within 5 s", async () => {
    const [ada, bob, carol] = await Promise.all([admin.operator(), admin.operator(), admin.operator()]);
    const adaHere = await signedIn(ada);
    const bobHere = await signedIn(bob, sameBrowserAs(adaHere.browser));
    const adaElsewhere = await signedIn(ada);
    const carolElsewhere = await signedIn(carol);

    const remembered = await portal.request(adaHere.portal.accessToken, "GET", "/api/v1/me/accounts");
    expect(remembered.status).toBe(200);
    const account = (who: TestAccount, current: boolean) => ({
      id: who.accountId,
      name: "Test account",
      email: who.email,
      avatarUrl: null,
      signedIn: true,
      current,
    });
    expect(await remembered.json()).toEqual({ accounts: [account(ada, true), account(bob, false)] });
    const asBob = await portal.request(bobHere.portal.accessToken, "GET", "/api/v1/me/accounts");
    expect(await asBob.json()).toEqual({ accounts: [account(bob, true), account(ada, false)] });
    const asCarol = await portal.request(carolElsewhere.portal.accessToken, "GET", "/api/v1/me/accounts");
    expect(await asCarol.json()).toEqual({ accounts: [account(carol, true)] });

    const response = await portal.request(adaHere.portal.accessToken, "POST", "/api/v1/me/logout/all");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      accounts: [ada.accountId, bob.accountId].sort(),
      sessionsEnded: 2,
      // One per console session: the portal's client has no back-channel logout URI.
      backchannelLogoutsQueued: 2,
    });

    expect(await portal.answer(adaHere.portal)).toBe(401);
    expect(await portal.answer(bobHere.portal)).toBe(401);
    const started = Date.now();
    await waitFor(
      "the console sessions of the browser to end",
      async () =>
        (await consoleStatus(adaHere.browser)) === 401 && (await consoleStatus(bobHere.browser)) === 401,
      5_000,
    );
    expect(Date.now() - started).toBeLessThan(5_000);

    expect(await portal.answer(adaElsewhere.portal)).toBe(200);
    expect(await consoleStatus(adaElsewhere.browser)).toBe(200);
    expect(await portal.answer(carolElsewhere.portal)).toBe(200);
    expect(await consoleStatus(carolElsewhere.browser)).toBe(200);

    const [row, ...more] = await auditRows(admin.manager.sql, ada.accountId, "session.browser-logged-out");
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      result: "success",
      details: { grantsRevoked: 4, backchannelLogoutsQueued: 2 },
    });
    const sent = await admin.manager.sql<{ clientId: string; accountId: string; sentAt: Date | null }[]>`
      select client_id, account_id, sent_at from backchannel_logout_outbox order by account_id`;
    expect(sent).toEqual(
      [ada.accountId, bob.accountId].sort().map((accountId) => ({
        clientId: admin.clientId,
        accountId,
        sentAt: expect.any(Date),
      })),
    );
  });
});
