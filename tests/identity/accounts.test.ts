/**
 * The accounts aggregate at domain level: the sign-in decision answers a typed outcome and
 * audits it; a password change is judged by the current password and the one policy, and
 * revokes every token issued before it; a deletion removes the account and its roles, writes
 * one audit row, and is not repeated.
 */

import { silentLogger } from "@tjm/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  changePassword,
  createSignInLimiter,
  createSignIns,
  deleteAccount,
  findAccount,
  findSignInCandidate,
  issuedBeforeRevocation,
} from "../../manager/src/identity/accounts/index.ts";
import { parseCommonPasswords } from "../../manager/src/identity/common-passwords.ts";
import { verifyPassword } from "../../manager/src/identity/password-hashing.ts";
import type { Sql } from "../../manager/src/platform/db.ts";
import { createTestAccount, TEST_PASSWORD } from "../harness/identity.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

const COMMON = parseCommonPasswords("a list for this test\n\nletmein-please\n");
const NEW_PASSWORD = "a brand new passphrase 7";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: Sql;

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
  sql = schema.sql;
});
afterAll(() => schema?.drop());

const auditRows = (accountId: string) =>
  sql<{ event: string; result: string }[]>`
    select event, result from audit_events where actor_account_id = ${accountId} order by id`;

async function storedHash(email: string): Promise<string> {
  return (await findSignInCandidate(sql, email))?.passwordHash as string;
}

describe("changePassword", () => {
  it("refuses a wrong current password and changes nothing", async () => {
    const account = await createTestAccount(sql);
    const before = await storedHash(account.email);
    expect(
      await changePassword(
        sql,
        { accountId: account.accountId, currentPassword: "not the password", newPassword: NEW_PASSWORD },
        { commonPasswords: COMMON },
      ),
    ).toEqual({ outcome: "current-password-wrong" });
    expect(await storedHash(account.email)).toBe(before);
    expect((await findAccount(sql, account.accountId))?.tokensValidAfter).toBe(Number.NEGATIVE_INFINITY);
    expect(await auditRows(account.accountId)).toEqual([
      { event: "account.password-changed", result: "failure" },
    ]);
  });

  it("refuses a new password the policy refuses, listing its problems", async () => {
    const account = await createTestAccount(sql);
    const change = (newPassword: string) =>
      changePassword(
        sql,
        { accountId: account.accountId, currentPassword: TEST_PASSWORD, newPassword },
        { commonPasswords: COMMON },
      );
    expect(await change("short")).toMatchObject({
      outcome: "policy-refused",
      problems: [{ code: "too-short" }],
    });
    expect(await change("letmein-please")).toMatchObject({
      outcome: "policy-refused",
      problems: [{ code: "common" }],
    });
    expect(await verifyPassword(await storedHash(account.email), TEST_PASSWORD)).toBe(true);
  });

  it("stores the new password, revokes every token issued until now and audits the change", async () => {
    const account = await createTestAccount(sql);
    const issuedBefore = Math.floor(Date.now() / 1000);
    expect(
      await changePassword(
        sql,
        { accountId: account.accountId, currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD },
        { commonPasswords: COMMON },
      ),
    ).toEqual({ outcome: "changed" });
    const hash = await storedHash(account.email);
    expect(await verifyPassword(hash, NEW_PASSWORD)).toBe(true);
    expect(await verifyPassword(hash, TEST_PASSWORD)).toBe(false);
    const { tokensValidAfter } = (await findAccount(sql, account.accountId)) as { tokensValidAfter: number };
    expect(issuedBeforeRevocation(issuedBefore, tokensValidAfter)).toBe(true);
    expect(await auditRows(account.accountId)).toEqual([
      { event: "account.password-changed", result: "success" },
    ]);
  });

  it("answers unknown-account for an account that does not exist", async () => {
    expect(
      await changePassword(
        sql,
        { accountId: crypto.randomUUID(), currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD },
        { commonPasswords: COMMON },
      ),
    ).toEqual({ outcome: "unknown-account" });
  });
});

describe("deleteAccount", () => {
  it("deletes the account and its roles, audits it once, and finds nothing the second time", async () => {
    const account = await createTestAccount(sql, { roles: ["operator", "client-admin"] });
    expect(await deleteAccount(sql, account.accountId)).toEqual({
      sessionsEnded: 0,
      grantsRevoked: 0,
      backchannelLogoutsQueued: 0,
      developerAppsDeleted: [],
    });
    expect(await findAccount(sql, account.accountId)).toBeUndefined();
    expect(await sql`select from account_roles where account_id = ${account.accountId}`).toHaveLength(0);
    expect(await deleteAccount(sql, account.accountId)).toBeUndefined();
    expect(await auditRows(account.accountId)).toEqual([{ event: "account.deleted", result: "success" }]);
  });
});

describe("createSignIns", () => {
  const attempt = (email: string, password: string, resources: ("operations" | "account-portal")[] = []) => ({
    email,
    password,
    address: "192.0.2.7",
    clientId: "sign-in-test-client",
    resources,
  });
  const signIns = () =>
    createSignIns({
      sql,
      logger: silentLogger,
      limiter: createSignInLimiter(sql, { accountLimit: 2, addressLimit: 1000, windowSeconds: 900 }),
    });
  const reasons = (accountId: string) =>
    sql<{ result: string; reason: string | null }[]>`
      select result, details->>'reason' as reason from audit_events
      where actor_account_id = ${accountId} and event = 'auth.sign-in' order by id`;

  it("signs in an operator for the operations audience, and refuses an account without the role", async () => {
    const operator = await createTestAccount(sql, { roles: ["operator"] });
    const other = await createTestAccount(sql);
    const decide = signIns();
    expect(await decide.verify(attempt(operator.email.toUpperCase(), TEST_PASSWORD, ["operations"]))).toEqual(
      {
        outcome: "signed-in",
        accountId: operator.accountId,
      },
    );
    expect(await decide.verify(attempt(other.email, TEST_PASSWORD, ["operations"]))).toEqual({
      outcome: "role-missing",
      description: "this account does not hold the operator role the operations audience requires",
    });
    expect(await decide.verify(attempt(other.email, TEST_PASSWORD, ["account-portal"]))).toMatchObject({
      outcome: "signed-in",
    });
    expect(await reasons(operator.accountId)).toEqual([{ result: "success", reason: null }]);
    expect(await reasons(other.accountId)).toEqual([
      { result: "failure", reason: "missing-role" },
      { result: "success", reason: null },
    ]);
  });

  it("answers a wrong password like an unknown account, then too many attempts past the limit", async () => {
    const account = await createTestAccount(sql);
    const decide = signIns();
    expect(await decide.verify(attempt(`nobody-${crypto.randomUUID()}@example.com`, TEST_PASSWORD))).toEqual({
      outcome: "invalid-credentials",
    });
    expect(await decide.verify(attempt(account.email, "wrong password"))).toEqual({
      outcome: "invalid-credentials",
    });
    expect(await decide.verify(attempt(account.email, "wrong password"))).toEqual({
      outcome: "invalid-credentials",
    });
    expect(await decide.verify(attempt(account.email, TEST_PASSWORD))).toMatchObject({
      outcome: "too-many-attempts",
      retryAfterSeconds: expect.any(Number),
    });
    expect(await reasons(account.accountId)).toEqual([
      { result: "failure", reason: "invalid-credentials" },
      { result: "failure", reason: "invalid-credentials" },
    ]);
  });

  it("refuses an address or a password no account can have before counting or hashing it", async () => {
    const decide = signIns();
    expect(await decide.verify(attempt("ada\u0000@example.com", TEST_PASSWORD))).toMatchObject({
      outcome: "invalid-request",
    });
    expect(await decide.verify(attempt("ada@example.com", "x".repeat(1025)))).toEqual({
      outcome: "invalid-request",
      description: "a password is at most 1024 characters",
    });
    expect(await sql`select from sign_in_failures where key like 'ada%'`).toHaveLength(0);
  });
});
