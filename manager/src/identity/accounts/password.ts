/**
 * Changing an account's password: the current one proves who asks, the new one meets the one
 * password policy (identity/passwords.ts), and every token issued before is refused afterwards.
 */
import type { Sql } from "../../platform/db.ts";
import { hashPassword, verifyPassword } from "../password-hashing.ts";
import { type PasswordProblem, passwordProblems } from "../passwords.ts";
import { findAccount, findSignInCandidate, storeChangedPassword } from "./store.ts";

export interface PasswordChange {
  accountId: string;
  currentPassword: string;
  newPassword: string;
}

export type PasswordChangeOutcome =
  | { outcome: "changed" }
  | { outcome: "unknown-account" }
  | { outcome: "current-password-wrong" }
  | { outcome: "policy-refused"; problems: PasswordProblem[] };

export async function changePassword(
  sql: Sql,
  change: PasswordChange,
  commonPasswords: ReadonlySet<string>,
): Promise<PasswordChangeOutcome> {
  const account = await findAccount(sql, change.accountId);
  if (!account || account.disabled) return { outcome: "unknown-account" };
  const candidate = await findSignInCandidate(sql, account.email);
  if (!candidate?.passwordHash || !(await verifyPassword(candidate.passwordHash, change.currentPassword))) {
    return { outcome: "current-password-wrong" };
  }
  const problems = passwordProblems(change.newPassword, { email: account.email, commonPasswords });
  if (problems.length > 0) return { outcome: "policy-refused", problems };
  await storeChangedPassword(sql, account.id, await hashPassword(change.newPassword));
  return { outcome: "changed" };
}
