/**
 * The per-account sign-in limit holds whatever the spelling of the e-mail address, through the
 * real sign-in form (issue 20, item 2). The limit's key was made by JavaScript's toLowerCase and
 * the account found by PostgreSQL's lower(), which disagree on `İ`: every spelling with an `İ`
 * was a budget of its own for the same account, and a right password in such a spelling signed
 * in while the account was locked. Now one key does both (identity/identifiers.ts).
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

/** Below the default of 10: each wrong password costs an argon2 verification on two busy cores. */
const ACCOUNT_LIMIT = 4;

let manager: TestManager;
let client: TestClient;
let en: Catalogue;

beforeAll(async () => {
  manager = await TestManager.start({ env: { SIGN_IN_ACCOUNT_FAILURE_LIMIT: String(ACCOUNT_LIMIT) } });
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

async function passwordChecks(accountId: string): Promise<number> {
  const [row] = await manager.sql<{ n: number }[]>`
    select count(*)::int as n from audit_events
    where event = 'auth.sign-in' and result = 'failure' and actor_account_id = ${accountId}
      and details->>'reason' = 'invalid-credentials'`;
  return row?.n ?? 0;
}

describe("one account attacked with many spellings of its e-mail address", () => {
  it("gets one budget of wrong passwords, is then locked for every spelling, and no spelling signs in while it is", async () => {
    const local = `kiwi-${crypto.randomUUID().slice(0, 8)}`;
    const account = await createTestAccount(manager.sql, { email: `${local}@example.com` });
    const upper = account.email.toUpperCase();
    /** Spellings of the account's address: one key, one budget. */
    const sameAccount = [
      account.email,
      upper,
      ` ${local.replace("kiwi", "KiWi")}@Example.COM\t`,
      `${local.replace("kiwi", "ｋｉｗｉ")}@example.com`,
      `${local.replace("kiwi", "ki\u200bwi")}@example.com`,
    ];
    /**
     * PostgreSQL's lower() took each of these to the account's address, toLowerCase to a budget
     * of its own; `İ` is `i` with a dot above, which the key keeps apart from `i`.
     */
    const dottedCapitals = [`${local.replace("kiwi", "kİwi")}@example.com`, upper.replace("KIWI", "KİWİ")];
    const pending = await start();
    const tooMany = en.text("login.tooManyAttempts", { minutes: "15" });

    // The budget, spent in turn by every spelling of the address: exactly the limit is checked.
    for (let attempt = 0; attempt <= ACCOUNT_LIMIT; attempt++) {
      const email = sameAccount[attempt % sameAccount.length] as string;
      const answer = await postSignInForm(pending, { email, password: `wrong password ${attempt}` });
      expect(answer.status, `attempt ${attempt} as ${JSON.stringify(email)}`).toBe(
        attempt < ACCOUNT_LIMIT ? 200 : 429,
      );
    }
    expect(await passwordChecks(account.accountId)).toBe(ACCOUNT_LIMIT);
    // The dotted capitals are other addresses now: not one more check of this account's password.
    for (const email of dottedCapitals) {
      const answer = await postSignInForm(pending, { email, password: "another wrong password" });
      expect(answer).toMatchObject({
        status: 200,
        location: null,
        alert: en.text("login.invalidCredentials"),
      });
    }
    expect(await passwordChecks(account.accountId)).toBe(ACCOUNT_LIMIT);

    for (const email of sameAccount) {
      const right = await postSignInForm(pending, { email, password: account.password });
      expect(right, `right password as ${JSON.stringify(email)}`).toMatchObject({
        status: 429,
        location: null,
        alert: tooMany,
      });
    }
    for (const email of dottedCapitals) {
      const right = await postSignInForm(pending, { email, password: account.password });
      expect(right, `right password as ${JSON.stringify(email)}`).toMatchObject({
        status: 200,
        location: null,
        alert: en.text("login.invalidCredentials"),
      });
    }
    const [signedIn] = await manager.sql`
      select from audit_events where event = 'auth.sign-in' and result = 'success'
        and actor_account_id = ${account.accountId}`;
    expect(signedIn).toBeUndefined();
  });

  it("answers 400 to an address that NFKC makes longer than 254 characters, counting nothing", async () => {
    // 27 characters as typed; U+FDFA becomes eighteen once normalised.
    const email = `${"\ufdfa".repeat(15)}@example.com`;
    const [before] = await manager.sql<{ n: number }[]>`select count(*)::int as n from sign_in_failures`;
    const answer = await postSignInForm(await start(), { email, password: "any password" });
    expect(answer.status).toBe(400);
    expect(answer.location).toBeNull();
    expect(answer.html).toContain("at most 254 characters once normalised");
    const [after] = await manager.sql<{ n: number }[]>`select count(*)::int as n from sign_in_failures`;
    expect(after?.n).toBe(before?.n);
  });
});
