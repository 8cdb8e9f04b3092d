/**
 * Creating an account with a password: the password judged by the one policy
 * (identity/passwords.ts) before it is hashed, the account stored with its roles and audit rows.
 */
import type { Sql } from "../../platform/db.ts";
import { hashPassword } from "../password-hashing.ts";
import { type PasswordProblem, passwordProblems } from "../passwords.ts";
import { type AccountRole, createAccount } from "./store.ts";

export interface AccountWithPassword {
  email: string;
  displayName: string;
  password: string;
  roles: AccountRole[];
}

export type AccountCreation =
  | { outcome: "created"; account: { accountId: string; email: string; roles: AccountRole[] } }
  | { outcome: "policy-refused"; problems: PasswordProblem[] };

/** Throws AccountExistsError when another spelling of the address already has an account. */
export async function createAccountWithPassword(
  sql: Sql,
  request: AccountWithPassword,
  commonPasswords: ReadonlySet<string>,
): Promise<AccountCreation> {
  const { password, ...account } = request;
  const problems = passwordProblems(password, { email: account.email, commonPasswords });
  if (problems.length > 0) return { outcome: "policy-refused", problems };
  const passwordHash = await hashPassword(password);
  return { outcome: "created", account: await createAccount(sql, { ...account, passwordHash }) };
}
