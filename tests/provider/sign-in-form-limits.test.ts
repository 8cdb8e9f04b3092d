/**
 * Failed sign-ins slowed per account, end to end through the real sign-in form (issue 12,
 * security tests): 50 concurrent wrong passwords for one account get at most the limit's worth
 * of password checks, the rest a 429; the right password is then refused too; and an unknown
 * e-mail address is answered with the very page a wrong password gets.
 */
import { type PendingAuthorization, startAuthorization } from "@tjm/devstack/oidc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { type Catalogue, loadCatalogues } from "../../manager/src/provider/interactions/messages.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { postSignInForm } from "./provider-requests.ts";

/** The defaults (config.ts), which these tests rely on. */
const ACCOUNT_LIMIT = 10;
const WINDOW_MINUTES = 15;
const CONCURRENT_ATTEMPTS = 50;

let manager: TestManager;
let client: TestClient;
let en: Catalogue;

beforeAll(async () => {
  manager = await TestManager.start();
  client = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
  en = (await loadCatalogues()).get("en") as Catalogue;
});
afterAll(() => manager?.close());

function start(): Promise<PendingAuthorization> {
  return startAuthorization({
    issuer: manager.issuerUrl,
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    resource: resourceIndicator(ACCOUNT_PORTAL_AUDIENCE),
  });
}

async function signInFailures(accountId: string, reason: string): Promise<number> {
  const [row] = await manager.sql<{ n: number }[]>`
    select count(*)::int as n from audit_events
    where event = 'auth.sign-in' and result = 'failure' and actor_account_id = ${accountId}
      and details->>'reason' = ${reason}`;
  return row?.n ?? 0;
}

describe("one account under attack through the sign-in form", () => {
  it("checks at most the limit of 50 concurrent wrong passwords, refuses the rest with 429, then the right one too", async () => {
    const account = await createTestAccount(manager.sql);
    const pending = await start();
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT_ATTEMPTS }, (_, index) =>
        postSignInForm(pending, { email: account.email, password: `wrong password ${index}` }),
      ),
    );

    const checked = await signInFailures(account.accountId, "invalid-credentials");
    expect(checked).toBeLessThanOrEqual(ACCOUNT_LIMIT);
    // The limiter reserves an attempt before its check, atomically: exactly the limit got one.
    expect(checked).toBe(ACCOUNT_LIMIT);
    const invalid = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(invalid).toHaveLength(checked);
    expect(refused).toHaveLength(CONCURRENT_ATTEMPTS - checked);
    for (const answer of invalid) expect(answer.alert).toBe(en.text("login.invalidCredentials"));
    const tooMany = en.text("login.tooManyAttempts", { minutes: String(WINDOW_MINUTES) });
    for (const answer of refused) {
      expect(answer.location).toBeNull();
      expect(answer.alert).toBe(tooMany);
    }

    const right = await postSignInForm(pending, account);
    expect(right).toMatchObject({ status: 429, location: null, alert: tooMany });
    expect(await signInFailures(account.accountId, "invalid-credentials")).toBe(checked);
    const [success] = await manager.sql`
      select from audit_events where event = 'auth.sign-in' and result = 'success'
        and actor_account_id = ${account.accountId}`;
    expect(success).toBeUndefined();
  });
});

describe("an unknown e-mail address", () => {
  it("gets the page a known address with a wrong password gets, byte for byte but for what was typed", async () => {
    const known = await createTestAccount(manager.sql);
    const unknownEmail = `nobody-${crypto.randomUUID()}@example.com`;
    const [forKnown, forUnknown] = await Promise.all([
      start().then((pending) =>
        postSignInForm(pending, { email: known.email, password: "not the password" }),
      ),
      start().then((pending) =>
        postSignInForm(pending, { email: unknownEmail, password: "not the password" }),
      ),
    ]);

    expect(forUnknown.status).toBe(forKnown.status);
    expect(forUnknown.location).toBeNull();
    expect(forUnknown.alert).toBeDefined();
    expect(forUnknown.alert).toBe(forKnown.alert);
    // What differs is what the person typed (kept in the form) and the interaction's own id.
    const neutral = (html: string, email: string) =>
      html.replaceAll(email, "EMAIL").replace(/\/interaction\/[^/"?]+([/?])/g, "/interaction/UID$1");
    expect(neutral(forUnknown.html, unknownEmail)).toBe(neutral(forKnown.html, known.email));
  });
});
