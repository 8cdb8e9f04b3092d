/**
 * Recovering a password through the provider's pages in Chromium, in Pashto: "Forgot password?"
 * on the sign-in page, the identifier, the code from the Pashto e-mail typed in Persian digits,
 * the new password, and a sign-in with it. Every page right to left with `lang="ps"`, its
 * Arabic-script letters drawn from Noto, under the sign-in page's headers. The screenshot of each
 * page is kept in `$TMPDIR/tjm-recovery-pages-<run>`; their paths are printed.
 */
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resourceIndicator } from "../../manager/src/identity/resources.ts";
import { createTestAccount, createTestClient, type TestClient } from "../harness/identity.ts";
import { Mailbox } from "../harness/mailbox.ts";
import { TestManager } from "../harness/manager.ts";

const CHROMIUM = "/usr/bin/chromium";
const NEW_PASSWORD = "ژمی باران کابل غرونه 27";

let manager: TestManager;
let mailbox: Mailbox;
let browser: Browser;
let client: TestClient;
let screens: string;

beforeAll(async () => {
  mailbox = await Mailbox.start();
  manager = await TestManager.start({
    env: {
      ...mailbox.managerEnv(),
      MESSAGE_POLL_MS: "50",
    },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM });
  client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
  screens = join(tmpdir(), `tjm-recovery-pages-${Date.now()}`);
  await mkdir(screens, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await manager?.close();
  await mailbox?.stop();
});

function authorizationUrl(): string {
  const url = new URL(`${manager.issuerUrl}/auth`);
  url.search = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: "code",
    scope: "openid",
    resource: resourceIndicator(OPERATIONS_AUDIENCE),
    code_challenge: "x".repeat(43),
    code_challenge_method: "S256",
  }).toString();
  return url.href;
}

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(screens, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
}

/** The fonts Chromium drew the heading with (the DevTools protocol; the CSP allows no script of ours). */
async function headingFonts(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("DOM.enable");
  await cdp.send("CSS.enable");
  const { root } = await cdp.send("DOM.getDocument");
  const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector: "h1" });
  const { fonts } = await cdp.send("CSS.getPlatformFontsForNode", { nodeId });
  await cdp.detach();
  return fonts.map((font) => font.familyName);
}

async function expectPashto(page: Page, heading: string): Promise<void> {
  // Called right after a click that navigates: the page is read once its heading is there.
  await page.getByRole("heading", { name: heading, exact: true }).waitFor();
  expect(
    await page.evaluate(() => ({
      lang: document.documentElement.lang,
      dir: document.documentElement.dir,
      direction: getComputedStyle(document.documentElement).direction,
      heading: document.querySelector("h1")?.textContent,
    })),
  ).toEqual({ lang: "ps", dir: "rtl", direction: "rtl", heading });
  expect(await headingFonts(page)).toContainEqual(expect.stringMatching(/^Noto (Naskh|Sans) Arabic$/));
}

/**
 * Waits out the current second: a reset that revokes moves tokens_valid_after to now, and a
 * sign-in in that same second is refused (token times are whole seconds, and the same second
 * counts as before the revocation), so a sign-in right after a reset waits for the next one.
 */
async function afterRevocationSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
}

it("recovers a password through the pages in Pashto, then signs in with it", async () => {
  const account = await createTestAccount(manager.sql, { roles: ["operator"] });
  const context = await browser.newContext({ locale: "ps-AF" });
  const page = await context.newPage();
  await page.goto(authorizationUrl());

  await page.getByRole("link", { name: "پټنوم مو هېر شوی؟" }).click();
  await expectPashto(page, "خپل پټنوم بیا وټاکئ");
  const headers = (await page.request.get(page.url())).headers();
  expect(headers["content-security-policy"]).toContain("script-src 'none'");
  expect(headers["cache-control"]).toBe("no-store");
  await screenshot(page, "1-identifier");

  await page.getByLabel("برېښنالیک پته یا د تلیفون شمېره").fill(account.email);
  await page.getByRole("button", { name: "کوډ ولېږئ" }).click();
  await expectPashto(page, "کوډ ولیکئ");
  await screenshot(page, "2-code");

  const [mail] = await mailbox.untilReceived(account.email);
  const html = String(mail?.parsed.html);
  expect(html).toContain('<html lang="ps" dir="rtl">');
  const code = /<strong dir="ltr"[^>]*>(\d{6})<\/strong>/.exec(html)?.[1] as string;
  // Typed as a Pashto keyboard types digits.
  const persianDigits = code.replace(/\d/g, (digit) => String.fromCodePoint(0x06f0 + Number(digit)));
  await page.getByLabel("کوډ").fill(persianDigits);
  await page.getByRole("button", { name: "دوام ورکړئ" }).click();
  await expectPashto(page, "نوی پټنوم وټاکئ");
  await screenshot(page, "3-password");

  await page.getByLabel("نوی پټنوم").fill(NEW_PASSWORD);
  await page.getByRole("button", { name: "نوی پټنوم وټاکئ" }).click();
  await expectPashto(page, "ستاسو پټنوم وټاکل شو");
  await screenshot(page, "4-done");

  // Back on the sign-in page, the new password signs in: the provider redirects to the client.
  await afterRevocationSecond();
  await page.getByRole("link", { name: "ننوتلو ته بېرته ورشئ" }).click();
  await page.getByLabel("برېښنالیک پته").fill(account.email);
  await page.getByLabel("پټنوم").fill(NEW_PASSWORD);
  const redirected = page.waitForRequest((request) => request.url().startsWith(client.redirectUri));
  await page.getByRole("button", { name: "ننوتل" }).click();
  expect(new URL((await redirected).url()).searchParams.get("code")).toBeTruthy();

  const notices = await mailbox.untilReceived(account.email, 2);
  expect(String(notices[1]?.parsed.html)).toContain('<html lang="ps" dir="rtl">');
  await context.close();
}, 60_000);

describe("the recovery pages are as bound as the sign-in form", () => {
  /** An interaction's recovery page address, reached in a browser that holds its cookie. */
  async function recoveryPageUrl(): Promise<string> {
    const context = await browser.newContext({ locale: "en" });
    const page = await context.newPage();
    await page.goto(authorizationUrl());
    await page.getByRole("link", { name: "Forgot password?" }).click();
    await page.waitForURL((url) => url.pathname.endsWith("/recovery"));
    const url = page.url();
    await context.close();
    return url.split("?")[0] as string;
  }

  it("refuses a form posted without the interaction's cookie (another browser, another site) and a body past 16 KiB", async () => {
    const url = await recoveryPageUrl();
    const foreign = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ channel: "EMAIL", identifier: "ann@example.com" }),
    });
    expect(foreign.status).toBe(400);
    expect(await foreign.text()).toContain("This sign-in has expired or was started in another browser.");
    const [challenges] = await manager.sql<{ count: number }[]>`
      select count(*)::int as count from recovery_challenges where identifier_key = 'email:ann@example.com'`;
    expect(challenges?.count).toBe(0);

    const oversized = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `identifier=${"a".repeat(17 * 1024)}`,
    });
    expect(oversized.status).toBe(413);
  }, 30_000);
});
