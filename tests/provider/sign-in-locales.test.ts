/**
 * The sign-in page in Chromium in each language: English by default, Persian by the page's
 * language switch, Pashto and Dari by the browser's Accept-Language, each right to left with
 * `lang` and drawn with a font that has the script's letters (Noto, from fonts-noto-core), not
 * boxes. A failed sign-in answers in the language the person chose on the page. Screenshots
 * are kept in `$TMPDIR/tjm-sign-in-locales-<run>`; their paths are printed.
 */
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resourceIndicator } from "../../manager/src/identity/resources.ts";
import { createTestClient, type TestClient } from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const CHROMIUM = "/usr/bin/chromium";

let manager: TestManager;
let browser: Browser;
let client: TestClient;
let screens: string;

beforeAll(async () => {
  manager = await TestManager.start();
  browser = await chromium.launch({ executablePath: CHROMIUM });
  client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
  screens = join(tmpdir(), `tjm-sign-in-locales-${Date.now()}`);
  await mkdir(screens, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await manager?.close();
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

/** The fonts Chromium really drew the heading with (the DevTools protocol; the CSP allows no script of ours). */
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

async function documentLanguage(page: Page) {
  return page.evaluate(() => ({
    lang: document.documentElement.lang,
    dir: document.documentElement.dir,
    direction: getComputedStyle(document.documentElement).direction,
    heading: document.querySelector("h1")?.textContent,
  }));
}

describe("the sign-in page's languages", () => {
  it("switches from English to Persian on the page, right to left in a Persian font, and keeps Persian after a failed sign-in", async () => {
    const context = await browser.newContext({ locale: "en-US" });
    const page = await context.newPage();
    await page.goto(authorizationUrl());
    expect(await documentLanguage(page)).toMatchObject({ lang: "en", dir: "ltr", direction: "ltr" });
    await screenshot(page, "en");

    await page.getByRole("link", { name: "فارسی" }).click();
    // The click only starts the navigation: read the page once the English one has gone.
    await page.waitForFunction(() => document.documentElement?.lang !== "en");
    await page.waitForLoadState();
    expect(await documentLanguage(page)).toEqual({
      lang: "fa",
      dir: "rtl",
      direction: "rtl",
      heading: "ورود به Test client",
    });
    expect(await headingFonts(page)).toContainEqual(expect.stringMatching(/^Noto (Naskh|Sans) Arabic$/));
    await expect
      .poll(() => page.getByRole("link", { name: "فارسی" }).getAttribute("aria-current"))
      .toBe("true");
    await screenshot(page, "fa");

    await page.getByLabel("نشانی ایمیل").fill("nobody@example.test");
    await page.getByLabel("گذرواژه").fill("not the password");
    await page.getByRole("button", { name: "ورود" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent(), { timeout: 15_000 })
      .toBe("نشانی ایمیل یا گذرواژه درست نیست.");
    expect(await documentLanguage(page)).toMatchObject({ lang: "fa", dir: "rtl" });
    await context.close();
  }, 60_000);

  it.each([
    ["ps-AF", "ps", "Test client ته ننوځئ"],
    ["prs", "fa-AF", "داخل شدن به Test client"],
  ])(
    "follows Accept-Language %s: %s, right to left, every letter drawn from a Noto font",
    async (acceptLanguage, lang, heading) => {
      const context = await browser.newContext({ locale: acceptLanguage });
      const page = await context.newPage();
      await page.goto(authorizationUrl());
      expect(await documentLanguage(page)).toEqual({
        lang,
        dir: "rtl",
        direction: "rtl",
        heading,
      });
      const fonts = await headingFonts(page);
      // The client id is Latin; every Arabic-script letter came from Noto, none from a fallback box.
      expect(
        fonts.filter(
          (family) =>
            !/^Noto (Naskh|Sans) Arabic$/.test(family) && !/^(DejaVu|Liberation|Noto Sans$)/.test(family),
        ),
      ).toEqual([]);
      expect(fonts).toContainEqual(expect.stringMatching(/^Noto (Naskh|Sans) Arabic$/));
      await screenshot(page, lang);
      await context.close();
    },
    60_000,
  );
});
