/**
 * A sign-in in a real browser against the built-in provider: Chromium follows the client's
 * authorization request to the sign-in page, the page renders under its Content-Security-Policy
 * (its one style allowed by hash, nothing else), a person types the e-mail and password, and the
 * browser lands on the client's redirect URI with a code that exchanges for an operations token
 * the Manager accepts.
 */
import { createHash, randomBytes } from "node:crypto";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resourceIndicator } from "../../manager/src/identity/resources.ts";
import {
  createTestAccount,
  createTestClient,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";

const CHROMIUM = "/usr/bin/chromium";

let manager: TestManager;
let browser: Browser;
let operator: TestAccount;
let client: TestClient;

beforeAll(async () => {
  manager = await TestManager.start();
  browser = await chromium.launch({ executablePath: CHROMIUM });
  operator = await createTestAccount(manager.sql, { roles: ["operator"] });
  client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await manager?.close();
});

function authorizationUrl(verifier: string, state: string): string {
  const url = new URL(`${manager.issuerUrl}/auth`);
  url.search = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: "code",
    scope: "openid",
    resource: resourceIndicator(OPERATIONS_AUDIENCE),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    state,
  }).toString();
  return url.href;
}

describe("signing in with a browser", () => {
  it("renders the sign-in page under its CSP, takes the password, and lands on the redirect URI with a working code", async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    // The redirect URI is never served: the browser's arrival there is all the client needs.
    let callback: URL | undefined;
    await page.route(`${client.redirectUri}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: "text/plain", body: "signed in" });
    });
    const verifier = randomBytes(32).toString("base64url");
    const state = randomBytes(16).toString("base64url");

    await page.goto(authorizationUrl(verifier, state));
    expect(new URL(page.url()).pathname).toMatch(/^\/oidc\/interaction\//);
    // The inline style applied: the CSP hash matches it.
    const fontFamily = await page.evaluate(() => getComputedStyle(document.documentElement).fontFamily);
    expect(fontFamily).not.toBe("");
    expect(fontFamily).not.toMatch(/^"?Times/);

    await page.getByLabel(/e-mail/i).fill(operator.email);
    await page.getByLabel(/password/i).fill("not the password");
    await page.getByRole("button", { name: /sign in/i }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent(), { timeout: 15_000 })
      .toMatch(/not correct/);

    await page.getByLabel(/password/i).fill(operator.password);
    await page.getByRole("button", { name: /sign in/i }).click();
    await expect.poll(() => callback?.searchParams.get("state"), { timeout: 15_000 }).toBe(state);
    expect(violations).toEqual([]);

    const token = await fetch(`${manager.issuerUrl}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: callback?.searchParams.get("code") ?? "",
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        code_verifier: verifier,
        resource: resourceIndicator(OPERATIONS_AUDIENCE),
      }),
    });
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const jobs = await manager.request("/api/v1/operations/jobs", {
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(jobs.status).toBe(200);
    await page.close();
  }, 60_000);
});
