/**
 * The accounts aggregate at domain level: a password change is judged by the current password
 * and the one policy, and revokes every token issued before it; a deletion removes the account
 * and its roles, writes one audit row, and is not repeated.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  changePassword,
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
        COMMON,
      ),
    ).toEqual({ outcome: "current-password-wrong" });
    expect(await storedHash(account.email)).toBe(before);
    expect((await findAccount(sql, account.accountId))?.tokensValidAfter).toBe(Number.NEGATIVE_INFINITY);
    expect(await auditRows(account.accountId)).toEqual([]);
  });

  it("refuses a new password the policy refuses, listing its problems", async () => {
    const account = await createTestAccount(sql);
    const change = (newPassword: string) =>
      changePassword(
        sql,
        { accountId: account.accountId, currentPassword: TEST_PASSWORD, newPassword },
        COMMON,
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
        COMMON,
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
        COMMON,
      ),
    ).toEqual({ outcome: "unknown-account" });
  });
});

describe("deleteAccount", () => {
  it("deletes the account and its roles, audits it once, and finds nothing the second time", async () => {
    const account = await createTestAccount(sql, { roles: ["operator", "client-admin"] });
    expect(await deleteAccount(sql, account.accountId)).toBe(true);
    expect(await findAccount(sql, account.accountId)).toBeUndefined();
    expect(await sql`select from account_roles where account_id = ${account.accountId}`).toHaveLength(0);
    expect(await deleteAccount(sql, account.accountId)).toBe(false);
    expect(await auditRows(account.accountId)).toEqual([{ event: "account.deleted", result: "success" }]);
  });
});
