/**
 * The accounts aggregate's queries: the only writer of accounts and account_roles. Every change
 * commits with its audit rows in one transaction: a change is never stored without its trail,
 * nor the trail without it.
 */
import { isPgError, pgErrorCode, type Sql, type TransactionSql } from "../../platform/db.ts";
import { writeAuditEvent } from "../audit.ts";
import { emailKey } from "../identifiers.ts";
import { endAccountIn } from "../sessions/index.ts";

export const ACCOUNT_ROLES = ["operator", "client-admin"] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

export class AccountExistsError extends Error {}
export class UnknownAccountError extends Error {}

/** Who acted, in an audit row's details, when no account did: the operator at the command line. */
const VIA_CLI = { via: "cli" } as const;

export interface NewAccount {
  email: string;
  displayName: string;
  passwordHash: string;
  roles: AccountRole[];
}

/**
 * Inserts the account and its roles; one audit row for the account and one per role. The address
 * is stored as given and unique by its key: another spelling of it is the same account.
 */
export async function createAccount(
  sql: Sql,
  account: NewAccount,
): Promise<{ accountId: string; email: string; roles: AccountRole[] }> {
  try {
    return await sql.begin(async (tx) => {
      const [row] = await tx<{ id: string }[]>`
        insert into accounts (email, email_key, display_name, password_hash)
        values (${account.email}, ${emailKey(account.email)}, ${account.displayName}, ${account.passwordHash})
        returning id`;
      const accountId = (row as { id: string }).id;
      await writeAuditEvent(tx, {
        event: "account.created",
        result: "success",
        details: { ...VIA_CLI, accountId },
      });
      for (const role of account.roles) {
        await tx`insert into account_roles (account_id, role) values (${accountId}, ${role})`;
        await writeAuditEvent(tx, {
          event: "account.role-granted",
          result: "success",
          details: { ...VIA_CLI, accountId, role },
        });
      }
      return { accountId, email: account.email, roles: account.roles };
    });
  } catch (err) {
    if (isPgError(err, pgErrorCode.uniqueViolation)) {
      throw new AccountExistsError(`an account with the e-mail address '${account.email}' already exists`);
    }
    throw err;
  }
}

/**
 * Disables an account and revokes its tokens: tokens_valid_after moves to now, so every token
 * it holds is refused on the next request on every replica, and its refresh tokens stop working.
 * Disabling a disabled account changes nothing and writes no second row.
 */
export async function disableAccount(
  sql: Sql,
  email: string,
): Promise<{ accountId: string; disabledAt: string; alreadyDisabled: boolean }> {
  return sql.begin(async (tx) => {
    const [account] = await tx<{ id: string; disabledAt: Date | null }[]>`
      select id, disabled_at from accounts where email_key = ${emailKey(email)} for update`;
    if (!account) throw new UnknownAccountError(`no account has the e-mail address '${email}'`);
    if (account.disabledAt) {
      return { accountId: account.id, disabledAt: account.disabledAt.toISOString(), alreadyDisabled: true };
    }
    const [row] = await tx<{ disabledAt: Date }[]>`
      update accounts set disabled_at = now(), tokens_valid_after = now(), updated_at = now()
      where id = ${account.id} returning disabled_at`;
    await writeAuditEvent(tx, {
      event: "account.disabled",
      result: "success",
      actorAccountId: account.id,
      details: { ...VIA_CLI, accountId: account.id },
    });
    return {
      accountId: account.id,
      disabledAt: (row as { disabledAt: Date }).disabledAt.toISOString(),
      alreadyDisabled: false,
    };
  });
}

/** An account as sign-in and token issuance see it. */
export interface Account {
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

export async function findAccount(sql: Sql, accountId: string): Promise<Account | undefined> {
  if (!UUID.test(accountId)) return undefined;
  const [row] = await sql<Account[]>`
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

/** A stored hash made with weaker parameters than today's, replaced after a right password. */
export async function replacePasswordHash(sql: Sql, accountId: string, passwordHash: string): Promise<void> {
  await sql`update accounts set password_hash = ${passwordHash}, updated_at = now() where id = ${accountId}`;
}

/**
 * A new password, with its audit row and what `onChanged` writes (the notice) in one
 * transaction. With revokeTokens every token issued until now is refused (tokens_valid_after):
 * whoever held the old password loses what it got them on the next request of every replica.
 */
export async function storeChangedPassword(
  sql: Sql,
  accountId: string,
  passwordHash: string,
  options: {
    revokeTokens: boolean;
    clientId?: string | undefined;
    onChanged?: (tx: TransactionSql) => Promise<void>;
  } = { revokeTokens: true },
): Promise<void> {
  await sql.begin(async (tx) => {
    const revoke = options.revokeTokens ? tx`, tokens_valid_after = now()` : tx``;
    await tx`
      update accounts set password_hash = ${passwordHash}, updated_at = now() ${revoke}
      where id = ${accountId}`;
    await options.onChanged?.(tx);
    await writeAuditEvent(tx, {
      event: "account.password-changed",
      result: "success",
      actorAccountId: accountId,
      clientId: options.clientId,
      details: { accountId },
    });
  });
}

/** Who deleted an account, in its audit row: the operator at the command line, or the account itself. */
export interface AccountDeletion {
  via: "cli" | "portal";
  /** The client of the portal token that asked. */
  clientId?: string;
  /** Told after the commit when back-channel logouts were queued (the sender's wake). */
  logoutsQueued?: () => void;
}

export interface DeletedAccount {
  sessionsEnded: number;
  grantsRevoked: number;
  backchannelLogoutsQueued: number;
  /** Developer apps it owned (oauth_clients.owner_account_id), deleted with it. */
  developerAppsDeleted: string[];
}

/**
 * Deletes the account and ends everything it holds, in one transaction: every provider session
 * (a back-channel logout queued to each client with a sid in one), every grant and the refresh
 * tokens and codes bound to it; its roles, its browsers' memory of it, its developer apps and
 * anything else referencing it go with the row (every foreign key to accounts cascades or is set
 * null: tests/account/delete-account.test.ts checks that). Its tokens are refused from the next
 * request on: their subject, session and grant no longer exist. The audit trail keeps its rows,
 * which name the account by id (no foreign key), and gets one more; the address is free for a
 * new account. Undefined when there was no account.
 */
export async function deleteAccount(
  sql: Sql,
  accountId: string,
  deletion: AccountDeletion = { via: "cli" },
): Promise<DeletedAccount | undefined> {
  if (!UUID.test(accountId)) return undefined;
  const deleted = await sql.begin(async (tx) => {
    const [account] = await tx`select from accounts where id = ${accountId} for update`;
    if (!account) return undefined;
    const ended = await endAccountIn(tx, accountId);
    const apps = await tx<{ clientId: string }[]>`
      delete from oauth_clients where owner_account_id = ${accountId} returning client_id`;
    await tx`delete from accounts where id = ${accountId}`;
    const outcome: DeletedAccount = {
      sessionsEnded: ended.sessions.length,
      grantsRevoked: ended.grantIds.length,
      backchannelLogoutsQueued: ended.logoutsQueued,
      developerAppsDeleted: apps.map((app) => app.clientId).sort(),
    };
    await writeAuditEvent(tx, {
      event: "account.deleted",
      result: "success",
      actorAccountId: accountId,
      ...(deletion.clientId === undefined ? {} : { clientId: deletion.clientId }),
      details: { via: deletion.via, accountId, ...outcome },
    });
    return outcome;
  });
  if (deleted && deleted.backchannelLogoutsQueued > 0) deletion.logoutsQueued?.();
  return deleted;
}

/**
 * Whether a token issued at `issuedAt` (epoch seconds, whole: JWT `iat`) predates the
 * account's revocation. A token of the revocation's own second is refused too: its `iat`
 * cannot tell whether it came before or after, and refusing is the safe side.
 */
export function issuedBeforeRevocation(issuedAt: number, tokensValidAfter: number): boolean {
  return issuedAt <= Math.floor(tokensValidAfter);
}

/** An account that can receive a recovery code on a channel, by the identifier's key. */
export interface RecoveryRecipient {
  accountId: string;
  /** The e-mail address or the phone number, as stored. */
  recipient: string;
  /** The locale the account chose in its profile, if it did. */
  locale: string | null;
}

/**
 * The account a recovery code may go to: by its e-mail key (the address it signs in with), or by
 * a verified phone. A disabled account, an unverified phone or no account at all: undefined.
 */
export async function findRecoveryRecipient(
  sql: Sql | TransactionSql,
  channel: "email" | "sms",
  key: string,
): Promise<RecoveryRecipient | undefined> {
  const [row] =
    channel === "email"
      ? await sql<RecoveryRecipient[]>`
          select id as account_id, email as recipient, locale from accounts
          where email_key = ${key} and disabled_at is null`
      : await sql<RecoveryRecipient[]>`
          select id as account_id, phone as recipient, locale from accounts
          where phone = ${key} and phone_verified and disabled_at is null`;
  return row;
}

/** The address a reset's notice goes to, and what the password policy compares against. */
export async function findRecoverableAccount(
  sql: Sql | TransactionSql,
  accountId: string,
): Promise<{ email: string } | undefined> {
  const [row] = await sql<{ email: string }[]>`
    select email from accounts where id = ${accountId} and disabled_at is null`;
  return row;
}

/**
 * A password set through recovery, in the caller's transaction (with the spent token and the
 * ended sessions). `revokeTokens` moves tokens_valid_after, refusing every token issued until
 * now. Nothing else changes: no factor, no sign-in state, so a second factor is still asked at
 * the next sign-in. False when the account is gone or disabled.
 */
export async function storeRecoveredPassword(
  tx: TransactionSql,
  accountId: string,
  passwordHash: string,
  revokeTokens: boolean,
): Promise<boolean> {
  const updated = await tx`
    update accounts set password_hash = ${passwordHash}, updated_at = now(),
      tokens_valid_after = case when ${revokeTokens} then now() else tokens_valid_after end
    where id = ${accountId} and disabled_at is null
    returning id`;
  return updated.length === 1;
}
