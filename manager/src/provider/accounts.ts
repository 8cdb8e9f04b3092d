/**
 * Accounts as the provider sees them: who may sign in, what their tokens may claim, and
 * whether a code or refresh token presented now was issued before the account revoked its
 * tokens (accounts.tokens_valid_after).
 */
import { emailKey } from "../identity/identifiers.ts";
import type { Sql } from "../platform/db.ts";

export interface ProviderAccount {
  id: string;
  email: string;
  emailVerified: boolean;
  displayName: string;
  disabled: boolean;
  /** Epoch seconds; -Infinity until the account first revokes its tokens. */
  tokensValidAfter: number;
  roles: string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function findProviderAccount(sql: Sql, accountId: string): Promise<ProviderAccount | undefined> {
  if (!UUID.test(accountId)) return undefined;
  const [row] = await sql<ProviderAccount[]>`
    select a.id, a.email, a.email_verified, a.display_name, a.disabled_at is not null as disabled,
      extract(epoch from a.tokens_valid_after)::float8 as tokens_valid_after,
      array(select r.role from account_roles r where r.account_id = a.id order by r.role) as roles
    from accounts a where a.id = ${accountId}`;
  return row;
}

export interface SignInCandidate {
  id: string;
  passwordHash: string | null;
  disabled: boolean;
}

/**
 * The account an e-mail address names, in any spelling: found by its key, as the unique column
 * and the sign-in limit know it. Throws InvalidIdentifierError for an address no account can have.
 */
export async function findSignInCandidate(sql: Sql, email: string): Promise<SignInCandidate | undefined> {
  const [row] = await sql<SignInCandidate[]>`
    select id, password_hash, disabled_at is not null as disabled
    from accounts where email_key = ${emailKey(email)}`;
  return row;
}

/**
 * Whether a token issued at `issuedAt` (epoch seconds, whole: JWT `iat`) predates the
 * account's revocation. A token of the revocation's own second is refused too: its `iat`
 * cannot tell whether it came before or after, and refusing is the safe side.
 */
export function issuedBeforeRevocation(issuedAt: number, tokensValidAfter: number): boolean {
  return issuedAt <= Math.floor(tokensValidAfter);
}
