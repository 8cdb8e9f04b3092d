/**
 * The account's own page (/account) in headless Chromium, one person from sign-in to deletion:
 * change the name, the e-mail address (with the code mailed to the new one) and the password,
 * upload an avatar (the console streams it to Swift's s3api, which checks the
 * presigned signature), see a second sign-in among the sessions and sign it out (its console
 * session ends too), log out everywhere, use the page in Pashto (right to left), and delete the
 * account: refused for want of a recent sign-in, then signed in again with max_age and deleted.
 * axe-core checks the page; screenshots go to `$TMPDIR/tjm-admin-screens-account-page-<run>`.
 */
import { type SwiftServer, startSwift } from "@tjm/devstack/swift";
import { type Browser, chromium, type Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reauthId } from "../../admin/src/page/element-ids.js";
import type { TestAccount } from "../harness/identity.ts";
import { Mailbox } from "../harness/mailbox.ts";
import { TestAdmin } from "./admin-harness.ts";
import { CHROMIUM, screenshots, seriousViolations, signInAgainFrom, switchLanguage } from "./chromium.ts";

let swift: SwiftServer;
let mailbox: Mailbox;
let admin: TestAdmin;
let account: TestAccount;
let browser: Browser;
let page: Page;
let shoot: Awaited<ReturnType<typeof screenshots>>;
const cspViolations: string[] = [];

beforeAll(async () => {
  [swift, mailbox] = await Promise.all([startSwift(), Mailbox.start()]);
  await swift.createBucket("tjm-avatars");
  [admin, browser, shoot] = await Promise.all([
    TestAdmin.start({
      manager: {
        storage: swift.settings,
        env: {
          ...mailbox.managerEnv(),
          MESSAGE_POLL_MS: "100",
        },
      },
    }),
    chromium.launch({ executablePath: CHROMIUM }),
    screenshots("account-page"),
  ]);
  account = await admin.account();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await admin?.close();
  await Promise.all([swift?.stop(), mailbox?.stop()]);
});

async function expectAccessible(view: string): Promise<void> {
  expect(await seriousViolations(page), `axe on ${view}`).toEqual([]);
}

/** The provider's sign-in page, filled in; then back on the console. */
async function signInOnProviderPage(): Promise<void> {
  await page.getByLabel(/e-mail/i).fill(account.email);
  await page.getByLabel(/password/i).fill(account.password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL((url) => url.origin === admin.baseUrl && url.pathname === "/account");
}

/**
 * Polls until the page shows what is expected: argon2id, sharp and the provider's round trips
 * can take seconds on a loaded machine, longer than expect.poll's default second.
 */
const until = <T>(read: () => Promise<T> | T, options: { timeout?: number } = {}) =>
  expect.poll(read, { timeout: 10_000, ...options });

const sessionRows = () => page.locator("#sessions-table tbody tr");
const status = (section: string) => page.locator(`#${section}-status`).textContent();

describe("the account page", () => {
  it("signs in and shows the account's profile, sessions, remembered accounts and apps", async () => {
    await page.goto(`${admin.baseUrl}/account`);
    await signInOnProviderPage();
    await until(() => page.getByLabel("Name").inputValue()).toBe("Test account");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Your account");
    await until(() => sessionRows().count()).toBe(1);
    await until(() => page.locator("#remembered-list li").count()).toBe(1);
    await until(() => page.locator("#apps-list li").allTextContents()).toEqual([
      expect.stringContaining("Admin console"),
    ]);
    await shoot(page, "account-01-signed-in");
    await expectAccessible("the account page");
  });

  it("changes the name", async () => {
    await page.getByLabel("Name").fill("Farida Noori");
    await page.getByRole("button", { name: "Save the profile" }).click();
    await until(() => status("profile")).toBe("Profile saved.");
    const [row] = await admin.manager.sql`select display_name from accounts where id = ${account.accountId}`;
    expect(row?.displayName).toBe("Farida Noori");
  });

  it("changes the e-mail address once the code sent to the new one is typed in", async () => {
    const address = `farida-${account.accountId}@example.org`;
    await page.getByLabel("New e-mail address").fill(address);
    await page.getByRole("button", { name: "Send a code" }).click();
    await until(() => status("identifiers")).toBe(`Waiting for the code sent to ${address}.`);
    const code = page.getByLabel("Code", { exact: true });
    expect(await code.evaluate((input) => input === document.activeElement)).toBe(true);
    const [mail] = await mailbox.untilReceived(address);
    await code.fill(/Your code: (\d{6})/.exec(mail?.parsed.text ?? "")?.[1] ?? "");
    await page.getByRole("button", { name: "Verify" }).click();
    await until(() => status("identifiers")).toBe(`${address} is now your e-mail address.`);
    expect(await page.locator("#identifiers-summary dd").first().textContent()).toBe(`${address} (verified)`);
    expect(await page.locator("#code-form").isHidden()).toBe(true);
    account = { ...account, email: address };
  });

  it("changes the password, showing a wrong current one at its field", async () => {
    const newPassword = "a quiet river at dawn 2026";
    await page.getByLabel("Current password").fill("not the password at all");
    await page.getByLabel("New password").fill(newPassword);
    await page.getByRole("button", { name: "Change the password" }).click();
    await until(() => status("password")).toMatch(/^The password was not changed: /);
    const current = page.getByLabel("Current password");
    expect(await current.getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#password-current-errors li").allTextContents()).toEqual([
      "the current password is wrong",
    ]);
    expect(await current.evaluate((input) => input === document.activeElement)).toBe(true);
    await current.fill(account.password);
    await page.getByRole("button", { name: "Change the password" }).click();
    await until(() => status("password")).toBe("Password changed.");
    expect(await current.getAttribute("aria-invalid")).toBeNull();
    account = { ...account, password: newPassword };
  });

  it("uploads an avatar through the console and shows it, in the switcher too", async () => {
    const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: "#2a7f62" } })
      .png()
      .toBuffer();
    await page.getByLabel("New avatar (PNG, JPEG or WebP)").setInputFiles({
      name: "me.png",
      mimeType: "image/png",
      buffer: png,
    });
    await page.getByRole("button", { name: "Upload the avatar" }).click();
    await until(() => status("profile")).toBe("Avatar updated.");
    const avatar = page.getByRole("img", { name: "Your avatar" });
    expect(await avatar.getAttribute("src")).toMatch(/^\/api\/me\/profile\/avatar\?v=[0-9a-f-]{36}$/);
    await until(() => avatar.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(256);
    const inSwitcher = page.getByRole("img", { name: "Avatar of Farida Noori" });
    await until(() => inSwitcher.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(256);
    await shoot(page, "account-02-avatar");
    await expectAccessible("the account page with an avatar");
  });

  it("shows a second sign-in among the sessions and signs it out, ending its console session", async () => {
    const elsewhere = await admin.signIn(account);
    expect((await admin.request(elsewhere.browser, "/api/me")).status).toBe(200);
    await page.reload();
    await until(() => sessionRows().count()).toBe(2);
    const other = page.locator("#sessions-table tbody tr:not([data-current])");
    await shoot(page, "account-03-two-sessions");
    page.once("dialog", (dialog) => void dialog.accept());
    await other.getByRole("button", { name: /^Sign out the session signed in / }).click();
    await until(() => status("sessions")).toBe("The session was signed out.");
    await until(() => sessionRows().count()).toBe(1);
    expect(await page.locator("#sessions-table tbody tr[data-current]").count()).toBe(1);
    // The provider tells the console by back-channel logout: that browser's session ends there.
    await until(async () => (await admin.request(elsewhere.browser, "/api/me")).status, {
      timeout: 5000,
    }).toBe(401);
  });

  it("logs out everywhere: the provider's sessions and the console's end", async () => {
    const cookie = (await page.context().cookies(admin.baseUrl)).find((c) => c.name === admin.cookieName);
    await page.getByRole("button", { name: "Log out everywhere" }).click();
    await page.waitForURL(`${admin.baseUrl}/auth/signed-out`);
    await shoot(page, "account-04-logged-out-everywhere");
    const old = await fetch(`${admin.baseUrl}/api/me`, {
      headers: { cookie: `${admin.cookieName}=${cookie?.value}` },
    });
    expect(old.status).toBe(401);
    const [live] = await admin.manager.sql`
      select count(*)::int as count from oidc_records
      where model = 'Session' and payload->>'accountId' = ${account.accountId}`;
    expect(live?.count).toBe(0);
  });

  it("works in Pashto, right to left, with its texts from the server and the script", async () => {
    await page.goto(`${admin.baseUrl}/account`);
    await signInOnProviderPage();
    await switchLanguage(page, "Language", "پښتو", "ps");
    expect(page.url()).toBe(`${admin.baseUrl}/account`);
    expect(await page.locator("html").getAttribute("lang")).toBe("ps");
    expect(await page.locator("html").getAttribute("dir")).toBe("rtl");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("ستاسو حساب");
    await until(() => page.getByLabel("نوم", { exact: true }).inputValue()).toBe("Farida Noori");
    // The script's texts: the current session's marker and the switcher's state.
    await until(() => page.locator("#sessions-table tbody tr[data-current]").textContent()).toContain(
      "همدا ناسته",
    );
    await until(() => page.locator("#remembered-list li").textContent()).toContain("همدا حساب");
    const heading = await page.getByRole("heading", { name: "پېژندپاڼه" }).boundingBox();
    const avatar = await page.getByRole("img", { name: "ستاسو انځور" }).boundingBox();
    // Mirrored: the avatar starts its row on the right.
    expect(heading && avatar && avatar.x + avatar.width > 1280 / 2).toBe(true);
    expect(await page.locator("body").innerText()).not.toMatch(/[\u06f0-\u06f9\u0660-\u0669]/);
    await shoot(page, "account-05-pashto-rtl");
    await expectAccessible("the account page in Pashto");
    await switchLanguage(page, "ژبه", "English", "en");
  });

  it("deletes the account after confirming, signing in again when the sign-in is too old", async () => {
    // The provider's session signed in ten minutes ago; a new console sign-in through it (no
    // login page) gets a real token with that auth_time.
    await admin.manager.sql`
      update oidc_records set payload = jsonb_set(payload, '{loginTs}', to_jsonb(extract(epoch from now())::int - 600))
      where model = 'Session' and payload->>'accountId' = ${account.accountId}`;
    await signInAgainFrom(page, admin.baseUrl, "/account");
    await until(() => page.getByLabel("Name").inputValue()).toBe("Farida Noori");

    await page.getByRole("button", { name: "Delete my account" }).click();
    await until(() => status("delete")).toBe("Tick the box to confirm first.");
    await page.getByLabel("I understand that this cannot be undone").check();
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete my account" }).click();
    await until(() => status("delete")).toBe(
      "This needs a recent sign-in: sign in again, then try once more.",
    );
    const again = page.locator(`#${reauthId("delete")} button`);
    expect(await again.evaluate((button) => button === document.activeElement)).toBe(true);
    await shoot(page, "account-06-reauthentication-needed");
    await expectAccessible("the account page asking for a recent sign-in");

    await again.click();
    // max_age=300 against a sign-in ten minutes old: the provider asks for the password again.
    await page.waitForURL((url) => url.pathname.startsWith("/oidc/interaction/"));
    await signInOnProviderPage();
    expect(new URL(page.url()).hash).toBe("#delete");
    await until(() => page.evaluate(() => document.activeElement?.id)).toBe("delete-heading");
    await page.getByLabel("I understand that this cannot be undone").check();
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL(`${admin.baseUrl}/auth/signed-out`);
    expect(await admin.manager.sql`select 1 from accounts where id = ${account.accountId}`).toHaveLength(0);
  });

  it("broke no CSP rule", () => {
    expect(cspViolations).toEqual([]);
  });
});
