/**
 * The provider's pages in a real browser: axe-core finds no serious or critical violation in
 * either direction, the keyboard reaches the sign-in form in order with a visible focus ring,
 * and nothing needs scrolling sideways at 320 px.
 */
import axe from "axe-core";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import english from "../../manager/src/provider/interactions/messages/en.json" with { type: "json" };
import {
  type Catalogue,
  catalogueFrom,
  loadCatalogues,
} from "../../manager/src/provider/interactions/messages.ts";
import {
  consentPage,
  errorPage,
  loggedOutPage,
  loginPage,
  logoutConfirmPage,
} from "../../manager/src/provider/interactions/pages.ts";
import {
  codePage,
  identifierPage,
  passwordPage,
  recoveryDonePage,
} from "../../manager/src/provider/interactions/recovery-pages.ts";
import { secondFactorPage } from "../../manager/src/provider/interactions/second-factor-pages.ts";

/** Debian's chromium, which scripts/system-deps installs for the test profile. */
const CHROMIUM = "/usr/bin/chromium";

let browser: Browser;
let page: Page;
let en: Catalogue;

beforeAll(async () => {
  en = (await loadCatalogues()).get("en") as Catalogue;
  browser = await chromium.launch({ executablePath: CHROMIUM });
  page = await browser.newPage({ viewport: { width: 320, height: 640 } });
});
afterAll(() => browser?.close());

/** A right-to-left catalogue as Persian and Pashto will be, with the English texts. */
const rtl = catalogueFrom({ locale: "fa", direction: "rtl", messages: english.messages });

const LOGOUT_FORM = `<form id="op.logoutForm" method="post" action="/oidc/session/end/confirm"><input type="hidden" name="xsrf" value="0123456789abcdef"/></form>`;

function pages(catalogue: Catalogue): [string, string][] {
  const login = { catalogue, action: "/oidc/interaction/u1/login", clientName: "Render farm" };
  return [
    ["login", loginPage(login)],
    [
      "login, wrong credentials",
      loginPage({ ...login, email: "someone@example.com", problem: "invalid-credentials" }),
    ],
    [
      "login, too many attempts",
      loginPage({ ...login, problem: "too-many-attempts", retryAfterMinutes: 15 }),
    ],
    [
      "consent",
      consentPage({
        catalogue,
        action: "/oidc/interaction/u1/consent",
        abortAction: "/oidc/interaction/u1/abort",
        clientName: "Render farm",
        scopes: ["openid", "email", "profile", "offline_access", "jobs:read"],
        resources: ["operations", "account-portal", "admin-console", "tenant"],
      }),
    ],
    ["error", errorPage({ catalogue, error: "invalid_request", description: "the sign-in has expired" })],
    [
      "logout confirmation",
      logoutConfirmPage({
        catalogue,
        issuer: "https://id.example",
        formHtml: LOGOUT_FORM,
        formId: "op.logoutForm",
      }),
    ],
    ["logged out", loggedOutPage({ catalogue, clientName: "Render farm" })],
    ["login with the recovery link", loginPage({ ...login, recoveryHref: "/oidc/interaction/u1/recovery" })],
    ["recovery identifier", identifierPage({ catalogue, action: "/oidc/interaction/u1/recovery" })],
    [
      "recovery identifier, too many attempts",
      identifierPage({
        catalogue,
        action: "/oidc/interaction/u1/recovery",
        problem: "too-many-attempts",
        retryAfterMinutes: 60,
      }),
    ],
    [
      "recovery code, wrong",
      codePage({
        catalogue,
        action: "/oidc/interaction/u1/recovery/code",
        restartHref: "/oidc/interaction/u1/recovery",
        identifier: "someone@example.com",
        channel: "EMAIL",
        problem: "wrong-code",
      }),
    ],
    [
      "recovery password, refused",
      passwordPage({
        catalogue,
        action: "/oidc/interaction/u1/recovery/password",
        recoveryToken: "tjm_rt_x",
        problems: ["too-short", "common"],
      }),
    ],
    ["recovery done", recoveryDonePage({ catalogue, signInHref: "/oidc/interaction/u1" })],
    [
      "second factor, a code sent, wrong",
      secondFactorPage({
        catalogue,
        action: "/oidc/interaction/u1/second-factor",
        sendAction: "/oidc/interaction/u1/second-factor/code",
        factors: [
          { id: "f1", type: "totp", maskedDestination: null, createdAt: new Date(), lastUsedAt: null },
          {
            id: "f2",
            type: "email",
            maskedDestination: "s•••@example.com",
            createdAt: new Date(),
            lastUsedAt: null,
          },
        ],
        recoveryCodesRemaining: 4,
        selected: "email:f2",
        sentTo: "s•••@example.com",
        problem: "wrong-code",
      }),
    ],
  ];
}

interface Violation {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

async function seriousViolations(html: string): Promise<Violation[]> {
  await page.setContent(html);
  await page.addScriptTag({ content: axe.source });
  const violations = await page.evaluate(async () => {
    const results = await (window as unknown as { axe: typeof axe }).axe.run(document, {
      resultTypes: ["violations"],
    });
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(" ")),
    }));
  });
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

/** Moves where Tab starts to the top of the document, away from the autofocused field. */
async function startFromTop(): Promise<void> {
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.getSelection()?.collapse(document.body, 0);
  });
}

/** Where Tab goes from the top of the page: each stop's id or text, and its outline style. */
async function tabStops(count: number): Promise<{ stop: string; outline: string }[]> {
  await startFromTop();
  const stops: { stop: string; outline: string }[] = [];
  for (let i = 0; i < count; i++) {
    await page.keyboard.press("Tab");
    stops.push(
      await page.evaluate(() => {
        const focused = document.activeElement as HTMLElement;
        return {
          stop: focused.id || focused.textContent?.trim() || focused.tagName,
          outline: getComputedStyle(focused).outlineStyle,
        };
      }),
    );
  }
  return stops;
}

describe.each([
  ["left to right", () => en],
  ["right to left", () => rtl],
])("%s", (_, catalogue) => {
  it("every page has no serious or critical axe violation and fits 320 px", async () => {
    const found: Record<string, Violation[]> = {};
    for (const [name, html] of pages(catalogue())) {
      const violations = await seriousViolations(html);
      if (violations.length > 0) found[name] = violations;
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `${name} scrolls sideways at 320 px`).toBeLessThanOrEqual(0);
    }
    if (Object.keys(found).length > 0) console.error(JSON.stringify(found, null, 2));
    expect(found).toEqual({});
  });

  it("Tab reaches the skip link, e-mail, password and the button in order, each with a visible outline", async () => {
    await page.setContent(loginPage({ catalogue: catalogue(), action: "/login", clientName: "Render farm" }));
    expect(await tabStops(4)).toEqual([
      { stop: english.messages["page.skipToContent"], outline: "solid" },
      { stop: "email", outline: "solid" },
      { stop: "password", outline: "solid" },
      { stop: english.messages["login.submit"], outline: "solid" },
    ]);
  });
});

it("shows the focused skip link at the start of the line: the left in ltr, the right in rtl", async () => {
  const focusedSkipLink = async (catalogue: Catalogue) => {
    await page.setContent(errorPage({ catalogue, error: "invalid_request" }));
    await startFromTop();
    await page.keyboard.press("Tab");
    const box = await page.locator(".skip-link:focus").boundingBox();
    if (!box) throw new Error("the skip link is not focused");
    expect(box.y).toBeGreaterThanOrEqual(0);
    return { left: box.x, right: 320 - (box.x + box.width) };
  };
  const ltr = await focusedSkipLink(en);
  expect(ltr.left).toBeLessThan(20);
  expect(ltr.right).toBeGreaterThan(20);
  const mirrored = await focusedSkipLink(rtl);
  expect(mirrored.right).toBeLessThan(20);
  expect(mirrored.left).toBeGreaterThan(20);
});
