/**
 * The account page's two-step sign-in section in headless Chromium, one person: enrols an
 * authenticator app from the page (codes computed with otplib from the key the page shows; a
 * wrong one said at its field), gets the recovery codes once and prints them (the print-only
 * sheet alone), signs out and in again answering the provider's second step with a TOTP code,
 * makes new recovery codes, signs in with one, and removes the factor: refused for want of a
 * recent sign-in, then signed in again (password and a recovery code) and removed; then adds
 * e-mail codes with the mailed code. axe-core checks the section; screenshots go to
 * `$TMPDIR/tjm-admin-screens-account-mfa-<run>`.
 */
import { generate } from "otplib";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reauthId } from "../../admin/src/page/element-ids.js";
import type { TestAccount } from "../harness/identity.ts";
import { Mailbox } from "../harness/mailbox.ts";
import { TestAdmin } from "./admin-harness.ts";
import { CHROMIUM, screenshots, seriousViolations, signInAgainFrom } from "./chromium.ts";

let mailbox: Mailbox;
let admin: TestAdmin;
let account: TestAccount;
let browser: Browser;
let page: Page;
let shoot: Awaited<ReturnType<typeof screenshots>>;
let secret: string;
let recoveryCodes: string[];
const cspViolations: string[] = [];

beforeAll(async () => {
  mailbox = await Mailbox.start();
  [admin, browser, shoot] = await Promise.all([
    TestAdmin.start({
      manager: {
        env: {
          ...mailbox.managerEnv(),
          MESSAGE_POLL_MS: "100",
        },
      },
    }),
    chromium.launch({ executablePath: CHROMIUM }),
    screenshots("account-mfa"),
  ]);
  account = await admin.account();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
  });
  // Printing opens no dialog in a test: the stand-in keeps what the print-only sheet held.
  await page.addInitScript(() => {
    window.print = () => {
      const sheet = document.querySelector(".print-only.printing");
      (window as unknown as { printed: string[] }).printed = [...(sheet?.querySelectorAll("li") ?? [])].map(
        (item) => item.textContent ?? "",
      );
    };
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await admin?.close();
  await mailbox?.stop();
});

const until = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 10_000 });
const status = () => page.locator("#mfa-status").textContent();
const factorRows = () => page.locator("#mfa-table tbody tr[data-factor-id]");
/** The code of the step `steps` away from now. */
const totp = (steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

/** The provider's password page, then (`second`) its second step; then back on /account. */
async function signIn(second?: { method: RegExp; code: string }): Promise<void> {
  await page.getByLabel(/e-mail/i).fill(account.email);
  await page.getByLabel(/password/i).fill(account.password);
  await page.getByRole("button", { name: /sign in/i }).click();
  if (second) {
    await page.getByRole("heading", { name: "Confirm it is you" }).waitFor();
    await page.getByLabel(second.method).check();
    await page.locator("#code").fill(second.code);
    await page.getByRole("button", { name: "Continue" }).click();
  }
  await page.waitForURL((url) => url.origin === admin.baseUrl && url.pathname === "/account");
}

async function signOut(): Promise<void> {
  await page.getByRole("button", { name: "Log out", exact: true }).click();
  await page.waitForURL(`${admin.baseUrl}/auth/signed-out`);
}

async function keepRecoveryCodes(): Promise<string[]> {
  const codes = await page.locator("#mfa-recovery-list li").allTextContents();
  await page.getByRole("button", { name: "Print the codes" }).click();
  expect(await page.evaluate(() => (window as unknown as { printed: string[] }).printed)).toEqual(codes);
  await page.getByRole("button", { name: "I saved them" }).click();
  expect(await page.locator("#mfa-recovery").isHidden()).toBe(true);
  expect(await page.locator("#mfa-recovery-list li").count()).toBe(0);
  return codes;
}

/** Chromium through the provider's pages: up to 26 s per test on a slow machine running the suite beside it. */
describe("the account page's two-step sign-in", { timeout: 60_000 }, () => {
  it("enrols an authenticator app with its QR code and key, and shows ten recovery codes once", async () => {
    await page.goto(`${admin.baseUrl}/account`);
    await signIn();
    await until(() => page.locator("#mfa-table tbody").textContent()).toBe(
      "No second factor yet: your password alone signs you in.",
    );
    await page.getByRole("button", { name: "Add an authenticator app" }).click();
    const qr = page.getByRole("img", { name: "QR code for your authenticator app" });
    await until(() => qr.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBeGreaterThan(0);
    expect(await qr.getAttribute("src")).toMatch(/^data:image\/svg\+xml;base64,/);
    secret = (await page.locator("#mfa-secret").textContent()) ?? "";
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    const code = page.getByLabel("Code from the app or the message");
    expect(await code.evaluate((input) => input === document.activeElement)).toBe(true);
    await shoot(page, "mfa-01-authenticator-app");
    expect(await seriousViolations(page), "axe on the page enrolling an app").toEqual([]);
    // A wrong code is said at its field, which takes the focus.
    await code.fill((Number(await totp()) + 1).toString().padStart(6, "0").slice(-6));
    await page.getByRole("button", { name: "Add the factor" }).click();
    await until(() => status()).toMatch(/^The factor was not added: /);
    expect(await code.getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#mfa-code-errors li").count()).toBe(1);
    expect(await code.evaluate((input) => input === document.activeElement)).toBe(true);
    await code.fill(await totp());
    await page.getByRole("button", { name: "Add the factor" }).click();
    await until(() => status()).toBe("Save your recovery codes now: they are not shown again.");
    expect(await factorRows().locator("td").first().textContent()).toBe("Authenticator app");
    expect(await page.locator("#mfa-remaining").textContent()).toBe("10 recovery codes left");
    expect(await page.locator("#mfa-totp").isHidden()).toBe(true);
    expect(await page.locator("#mfa-secret").textContent()).toBe("");
    const shown = await page.locator("#mfa-recovery-list li").allTextContents();
    expect(shown).toHaveLength(10);
    await shoot(page, "mfa-02-recovery-codes");
    expect(await seriousViolations(page), "axe on the page with its recovery codes").toEqual([]);
    // Printed, the sheet is all there is: the codes and not the rest of the page.
    await page.evaluate(() => document.getElementById("mfa-print-sheet")?.classList.add("printing"));
    await page.emulateMedia({ media: "print" });
    expect(await page.locator("#mfa-print-sheet li").first().isVisible()).toBe(true);
    expect(await page.locator("#mfa-heading").isVisible()).toBe(false);
    await shoot(page, "mfa-03-printed-sheet");
    await page.emulateMedia({ media: "screen" });
    await page.evaluate(() => document.getElementById("mfa-print-sheet")?.classList.remove("printing"));
    recoveryCodes = await keepRecoveryCodes();
  });

  it("signs out, then in again with a code from the app at the provider's second step", async () => {
    await signOut();
    await page.goto(`${admin.baseUrl}/account`);
    // The enrolment took this step's code: the next step's is the one not used yet.
    await signIn({ method: /authenticator app/, code: await totp(1) });
    await until(() => factorRows().locator("td").nth(3).textContent()).not.toBe("—");
  });

  it("makes new recovery codes: the old ones no longer sign in", async () => {
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "New recovery codes" }).click();
    await until(() => page.locator("#mfa-recovery-list li").count()).toBe(10);
    const fresh = await keepRecoveryCodes();
    expect(fresh.some((code) => recoveryCodes.includes(code))).toBe(false);
    recoveryCodes = fresh;
  });

  it("signs in with a recovery code, which then counts one fewer", async () => {
    await signOut();
    await page.goto(`${admin.baseUrl}/account`);
    await signIn({ method: /recovery codes/, code: recoveryCodes[0] as string });
    await until(() => page.locator("#mfa-remaining").textContent()).toBe("9 recovery codes left");
  });

  it("removes the factor after signing in again, the sign-in being too old", async () => {
    // The provider's session signed in ten minutes ago; a console sign-in through it (no login
    // page) gets a token with that auth_time.
    await admin.manager.sql`
      update oidc_records set payload = jsonb_set(payload, '{loginTs}', to_jsonb(extract(epoch from now())::int - 600))
      where model = 'Session' and payload->>'accountId' = ${account.accountId}`;
    await signInAgainFrom(page, admin.baseUrl, "/account");
    await until(() => factorRows().count()).toBe(1);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Remove Authenticator app" }).click();
    await until(() => status()).toBe("This needs a recent sign-in: sign in again, then try once more.");
    await page.locator(`#${reauthId("mfa")} button`).click();
    await page.waitForURL((url) => url.pathname.startsWith("/oidc/interaction/"));
    await signIn({ method: /recovery codes/, code: recoveryCodes[1] as string });
    expect(new URL(page.url()).hash).toBe("#mfa");
    await until(() => page.evaluate(() => document.activeElement?.id)).toBe("mfa-heading");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Remove Authenticator app" }).click();
    await until(() => status()).toBe("The authenticator app was removed.");
    expect(await factorRows().count()).toBe(0);
    expect(await page.locator("#mfa-remaining").textContent()).toBe("");
    expect(await page.getByRole("button", { name: "New recovery codes" }).isHidden()).toBe(true);
    const [factors] = await admin.manager.sql`
      select count(*)::int as count from mfa_factors where account_id = ${account.accountId}`;
    expect(factors?.count).toBe(0);
  });

  it("adds e-mail codes with the code mailed: the first factor again, so recovery codes again", async () => {
    await admin.manager.sql`update accounts set email_verified = true where id = ${account.accountId}`;
    await page.getByRole("button", { name: "Add codes by e-mail" }).click();
    await until(() => page.locator("#mfa-code-intro").textContent()).toMatch(/^A code was sent to \S+•\S+\./);
    expect(await page.locator("#mfa-totp").isHidden()).toBe(true);
    // Before the code: the notices of the app added and removed.
    const mails = await mailbox.untilReceived(account.email, 3);
    const sent = mails.find((mail) => !/factor was (added|removed)/.test(mail.parsed.subject ?? ""));
    const code = /\b(\d{6})\b/.exec(sent?.parsed.text ?? "")?.[1] ?? "";
    await page.getByLabel("Code from the app or the message").fill(code);
    await page.getByRole("button", { name: "Add the factor" }).click();
    await until(() => page.locator("#mfa-recovery-list li").count()).toBe(10);
    await page.getByRole("button", { name: "I saved them" }).click();
    await until(() => status()).toBe("");
    expect(await factorRows().locator("td").allTextContents()).toEqual([
      "E-mail codes",
      expect.stringContaining("•"),
      expect.any(String),
      "—",
      "Remove",
    ]);
  });

  it("broke no CSP rule", () => {
    expect(cspViolations).toEqual([]);
  });
});
