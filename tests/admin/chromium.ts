/**
 * What the console's Chromium tests share: Debian's chromium (scripts/system-deps installs it
 * for the test profile), the run's screenshot folder `$TMPDIR/tjm-admin-screens-<run>`, and
 * axe-core's serious and critical violations on a page as it is now.
 */
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import axe from "axe-core";
import type { Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** A new folder for this run's screenshots; `shoot` writes a page's full screenshot there and prints its path. */
export async function screenshots(name: string) {
  const folder = join(tmpdir(), `tjm-admin-screens-${name}-${Date.now()}`);
  await mkdir(folder, { recursive: true });
  return async (page: Page, step: string): Promise<void> => {
    const path = join(folder, `${step}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`screenshot: ${path}`);
  };
}

export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (no inline script) allows.
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const results = await (window as unknown as { axe: typeof axe }).axe.run(document, {
      resultTypes: ["violations"],
    });
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      targets: violation.nodes.map((node) => node.target.join(" ")),
    }));
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id} (${violation.impact}) at ${violation.targets.join(", ")}`);
}

/**
 * Follows a link of a language switcher and waits for the page in that language (`lang`, its
 * html lang). The link redirects back to the address the page is at, so waiting for that URL
 * returns at once, on the old page.
 */
export async function switchLanguage(page: Page, switcher: string, language: string, lang: string) {
  await page.getByRole("navigation", { name: switcher }).getByRole("link", { name: language }).click();
  await page.waitForFunction((expected) => document.documentElement?.lang === expected, lang);
  await page.waitForLoadState();
}

/**
 * Starts a new console sign-in from the page as a user would from the address bar. The sign-in
 * ends the console session the page holds, so the page's own requests are let finish first: one
 * still in flight comes back 401, and the page's script then starts a sign-in of its own, a
 * second navigation beside this one (the suspected cause of a net::ERR_ABORTED seen once in CI).
 */
export async function signInAgainFrom(page: Page, baseUrl: string, returnTo: string) {
  await page.waitForLoadState("networkidle");
  await page.goto(`${baseUrl}/auth/sign-in?returnTo=${encodeURIComponent(returnTo)}`);
  await page.waitForURL(`${baseUrl}${returnTo}`);
}
