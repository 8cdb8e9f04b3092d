/**
 * The console's Clients view and the account page's developer apps in headless Chromium: a
 * client-admin creates a client (its secret shown once), edits its redirect URIs, rotates its
 * secret with a grace period (the new one shown once), sets a grant and deletes the client; an
 * account without the role is offered no Clients link and the console's proxy refuses it with
 * 403; a developer app is created and deleted from the account page. axe-core checks both
 * pages; screenshots go to `$TMPDIR/tjm-admin-screens-clients-console-<run>`.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reauthId } from "../../admin/src/page/element-ids.js";
import type { TestAccount } from "../harness/identity.ts";
import { TestAdmin } from "./admin-harness.ts";
import { CHROMIUM, screenshots, seriousViolations } from "./chromium.ts";

let admin: TestAdmin;
let clientAdmin: TestAccount;
let browser: Browser;
let page: Page;
let shoot: Awaited<ReturnType<typeof screenshots>>;
const cspViolations: string[] = [];

beforeAll(async () => {
  [admin, browser, shoot] = await Promise.all([
    TestAdmin.start(),
    chromium.launch({ executablePath: CHROMIUM }),
    screenshots("clients-console"),
  ]);
  clientAdmin = await admin.account(["client-admin"]);
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
  });
  // Every confirmation (rotate, delete, remove) is accepted.
  page.on("dialog", (dialog) => void dialog.accept());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await admin?.close();
});

/** Polls: argon2id and the provider's round trips can take seconds on a loaded machine. */
const until = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 10_000 });

const status = (section: string) => page.locator(`#${section}-status`).textContent();

async function storedClient(name: string) {
  const [row] = await admin.manager.sql<
    { id: string; redirectUris: string[]; previousSecretExpiresAt: Date | null; deletedAt: Date | null }[]
  >`select id, redirect_uris, previous_secret_expires_at, deleted_at from oauth_clients where name = ${name}`;
  return row;
}

describe("the Clients view", () => {
  it("signs a client-admin in and offers the Clients view in the navigation", async () => {
    await page.goto(`${admin.baseUrl}/clients`);
    await page.getByLabel(/e-mail/i).fill(clientAdmin.email);
    await page.getByLabel(/password/i).fill(clientAdmin.password);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page.waitForURL(`${admin.baseUrl}/clients`);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Clients");
    const navigation = page.getByRole("navigation", { name: "Main" });
    expect(await navigation.getByRole("link", { name: "Clients" }).getAttribute("aria-current")).toBe("page");
    // The console's own client is listed.
    await until(() => page.locator("#clients-table tbody tr").allTextContents()).toContainEqual(
      expect.stringContaining("Admin console"),
    );
  });

  it("creates a client, showing its secret once, and edits its redirect URIs", async () => {
    await page.getByRole("button", { name: "New client" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Reports dashboard");
    await page.locator("#client-form").getByLabel("Type").selectOption("confidential");
    await page.getByLabel("authorization_code").check();
    await page.getByLabel("Redirect URIs (one per line)").fill("https://reports.example.com/callback");
    await page.getByRole("button", { name: "Create the client" }).click();
    await until(() => status("editor")).toBe("Client Reports dashboard created.");
    const secret = page.getByLabel("Client secret");
    const created = await secret.inputValue();
    expect(created).toMatch(/^tjm_cs_/);
    expect(await secret.evaluate((input) => input === document.activeElement)).toBe(true);
    await until(() => page.locator("#clients-table tbody").textContent()).toContain("Reports dashboard");
    expect(await page.getByRole("heading", { level: 2, name: "Edit Reports dashboard" }).count()).toBe(1);

    await page
      .getByLabel("Redirect URIs (one per line)")
      .fill("https://reports.example.com/callback\nhttps://reports.example.com/callback-2");
    await page.getByRole("button", { name: "Save the client" }).click();
    await until(() => status("editor")).toBe("Client Reports dashboard saved.");
    // The secret is not shown again once the client is saved.
    expect(await page.locator("#client-secret").isHidden()).toBe(true);
    expect((await storedClient("Reports dashboard"))?.redirectUris).toEqual([
      "https://reports.example.com/callback",
      "https://reports.example.com/callback-2",
    ]);
    // A URI the clients' rules refuse is named at its field.
    await page.getByLabel("Redirect URIs (one per line)").fill("https://reports.example.com/#fragment");
    await page.getByRole("button", { name: "Save the client" }).click();
    await until(() => status("editor")).toMatch(/^The client was not saved: /);
    expect(await page.getByLabel("Redirect URIs (one per line)").getAttribute("aria-invalid")).toBe("true");
    await page.getByLabel("Redirect URIs (one per line)").fill("https://reports.example.com/callback");
    await shoot(page, "clients-01-created");
    expect(await seriousViolations(page), "axe on the Clients view").toEqual([]);
  });

  it("rotates the secret with a grace period, showing the new one once", async () => {
    const before = await page.getByLabel("Client secret").inputValue();
    await page.getByLabel("Grace period for the old secret").selectOption({ label: "One hour" });
    await page.getByRole("button", { name: "Rotate the secret" }).click();
    await until(() => status("editor")).toMatch(
      /^New secret of Reports dashboard below; the old one works until /,
    );
    const rotated = await page.getByLabel("Client secret").inputValue();
    expect(rotated).toMatch(/^tjm_cs_/);
    expect(rotated).not.toBe(before);
    const grace = (await storedClient("Reports dashboard"))?.previousSecretExpiresAt?.getTime() ?? 0;
    expect(Math.abs(grace - Date.now() - 3600_000)).toBeLessThan(60_000);
    await shoot(page, "clients-02-rotated");
  });

  it("sets a grant", async () => {
    await page.getByLabel("Resource (its audience)").fill("account-portal");
    await page.getByRole("button", { name: "Set the grant" }).click();
    await until(() => status("grants")).toBe("Grant of account-portal set.");
    await until(() => page.locator('#grants-table tr[data-resource="account-portal"]').count()).toBe(1);
  });

  it("deletes the client after confirming, signing in again when the sign-in is too old", async () => {
    // The provider's session signed in ten minutes ago; a console sign-in through it (no login
    // page) gets tokens with that auth_time.
    await admin.manager.sql`
      update oidc_records set payload = jsonb_set(payload, '{loginTs}', to_jsonb(extract(epoch from now())::int - 600))
      where model = 'Session' and payload->>'accountId' = ${clientAdmin.accountId}`;
    const client = await storedClient("Reports dashboard");
    await page.goto(
      `${admin.baseUrl}/auth/sign-in?returnTo=${encodeURIComponent(`/clients?client=${client?.id}`)}`,
    );
    await page.waitForURL(`${admin.baseUrl}/clients?client=${client?.id}`);
    await until(() => page.locator("#editor-heading").textContent()).toBe("Edit Reports dashboard");
    await page.getByRole("button", { name: "Delete the client" }).click();
    await until(() => status("editor")).toBe(
      "This needs a recent sign-in: sign in again, then try once more.",
    );
    const again = page.locator(`#${reauthId("editor")} button`);
    expect(await again.evaluate((button) => button === document.activeElement)).toBe(true);
    await again.click();
    // max_age against a sign-in ten minutes old: the provider asks for the password again.
    await page.getByLabel(/e-mail/i).fill(clientAdmin.email);
    await page.getByLabel(/password/i).fill(clientAdmin.password);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page.waitForURL(`${admin.baseUrl}/clients?client=${client?.id}#editor`);
    await until(() => page.evaluate(() => document.activeElement?.id)).toBe("editor-heading");

    await page.getByRole("button", { name: "Delete the client" }).click();
    await until(() => status("editor")).toBe("Client Reports dashboard deleted.");
    await until(() => page.locator("#clients-table tbody").textContent()).not.toContain("Reports dashboard");
    expect((await storedClient("Reports dashboard"))?.deletedAt).toBeInstanceOf(Date);
    expect(await page.locator("#grants").isHidden()).toBe(true);
  });

  it("offers an account without the client-admin role no Clients link, and its proxy answers 403", async () => {
    const plain = await admin.account();
    const { browser: other } = await admin.signIn(plain);
    const account = await admin.request(other, "/account");
    expect(await account.text()).not.toContain('href="/clients"');
    const view = await admin.request(other, "/clients");
    expect(view.status).toBe(303);
    expect(view.headers.get("location")).toBe("/account");
    const listed = await admin.request(other, "/api/management/clients");
    expect(listed.status).toBe(403);
    expect((await listed.json()).code).toBe("auth.token_refused");
    const created = await admin.request(other, "/api/management/clients", {
      method: "POST",
      body: { name: "Sneaky", type: "public", grantTypes: ["authorization_code"] },
    });
    expect(created.status).toBe(403);
    expect(await storedClient("Sneaky")).toBeUndefined();
  });
});

describe("the account page's developer apps", () => {
  it("creates an app, showing its secret once, and deletes it", async () => {
    await page.goto(`${admin.baseUrl}/account`);
    await until(() => page.locator("#developer-apps-list").textContent()).toBe("You have no developer apps.");
    const section = page.locator("#developer-apps");
    await section.getByLabel("App title").fill("My reading list");
    await section.getByLabel("Redirect URIs (one per line)").fill("https://reading.example.com/callback");
    await section.getByRole("button", { name: "Create an app" }).click();
    await until(() => status("developer-apps")).toBe("App My reading list created.");
    expect(await section.getByLabel("Client secret").inputValue()).toMatch(/^tjm_cs_/);
    await until(() => page.locator("#developer-apps-list li").count()).toBe(1);
    const [owned] = await admin.manager.sql`
      select owner_account_id from oauth_clients where name = 'My reading list' and deleted_at is null`;
    expect(owned?.ownerAccountId).toBe(clientAdmin.accountId);
    await shoot(page, "clients-03-developer-app");
    expect(await seriousViolations(page), "axe on the account page's developer apps").toEqual([]);

    await section.getByRole("button", { name: "Delete My reading list" }).click();
    await until(() => status("developer-apps")).toBe("App My reading list deleted.");
    await until(() => page.locator("#developer-apps-list").textContent()).toBe("You have no developer apps.");
  });

  it("broke no CSP rule", () => {
    expect(cspViolations).toEqual([]);
  });
});
