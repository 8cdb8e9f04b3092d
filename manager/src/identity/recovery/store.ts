/**
 * The recovery aggregate's queries: the only writer of recovery_challenges and recovery_tokens
 * (its limits live in limits.ts). A challenge is written for every code request, whoever the
 * identifier belongs to; the resolver later gives it a code or leaves it without one.
 */
import type { Sql, TransactionSql } from "../../platform/db.ts";
import type { Channel, Locale } from "../delivery/index.ts";

/**
 * A newer challenge of the identifier voids the open ones, then the new one is written: one
 * challenge at a time per identifier, so a code sent earlier stops working.
 */
export async function openChallenge(
  tx: TransactionSql,
  challenge: { channel: Channel; identifierKey: string; locale: Locale | undefined; ttlSeconds: number },
): Promise<string> {
  await tx`
    update recovery_challenges set voided_at = now()
    where identifier_key = ${challenge.identifierKey} and voided_at is null and verified_at is null`;
  const [row] = await tx<{ id: string }[]>`
    insert into recovery_challenges (channel, identifier_key, locale, expires_at)
    values (${challenge.channel}, ${challenge.identifierKey}, ${challenge.locale ?? null},
      now() + make_interval(secs => ${challenge.ttlSeconds}))
    returning id`;
  return (row as { id: string }).id;
}

export interface UnresolvedChallenge {
  id: string;
  channel: Channel;
  identifierKey: string;
  /** The locale the request named; null when it named none. */
  locale: Locale | null;
  /** Voided or expired before it was resolved: it never gets a code. */
  over: boolean;
  /** Whole minutes the code will still work, for its message. */
  minutesLeft: number;
}

/** Challenges not looked up yet, oldest first, locked for this transaction (skip locked). */
export function claimUnresolved(tx: TransactionSql, limit: number): Promise<UnresolvedChallenge[]> {
  return tx<UnresolvedChallenge[]>`
    select id, channel, identifier_key, locale,
      (voided_at is not null or expires_at <= now()) as over,
      greatest(1, floor(extract(epoch from expires_at - now()) / 60))::int as minutes_left
    from recovery_challenges
    where resolved_at is null
    order by created_at
    limit ${limit}
    for update skip locked`;
}

/** Resolved: with the account and its code's HMAC when a code was sent, else without. */
export async function resolveChallenge(
  tx: TransactionSql,
  challengeId: string,
  code: { accountId: string; codeHmac: string; locale: Locale } | undefined,
): Promise<void> {
  await tx`
    update recovery_challenges set resolved_at = now(),
      account_id = ${code?.accountId ?? null}, code_hmac = ${code?.codeHmac ?? null},
      locale = coalesce(${code?.locale ?? null}, locale)
    where id = ${challengeId}`;
}

export interface CountedTry {
  id: string;
  accountId: string | null;
  codeHmac: string | null;
}

/**
 * Counts one code typed against the identifier's open challenge, before it is compared, in ONE
 * statement: the row lock and the `attempts < max` re-check let at most `maxAttempts` of any
 * number of concurrent tries through. Undefined: no open challenge, or its tries are used up.
 */
export async function countCodeTry(
  sql: Sql,
  identifierKey: string,
  maxAttempts: number,
): Promise<CountedTry | undefined> {
  const [row] = await sql<CountedTry[]>`
    update recovery_challenges set attempts = attempts + 1
    where id = (
        select id from recovery_challenges
        where identifier_key = ${identifierKey} and voided_at is null and verified_at is null
          and expires_at > now()
        order by created_at desc
        limit 1)
      and attempts < ${maxAttempts} and voided_at is null and verified_at is null
    returning id, account_id, code_hmac`;
  return row;
}

/**
 * A right code: the challenge is spent and a recovery token bound to it is stored (its SHA-256
 * only). Undefined when a concurrent right code spent it first.
 */
export async function exchangeChallenge(
  tx: TransactionSql,
  challengeId: string,
  tokenHash: Uint8Array,
  ttlSeconds: number,
): Promise<{ accountId: string } | undefined> {
  const [challenge] = await tx<{ accountId: string; locale: string }[]>`
    update recovery_challenges set verified_at = now()
    where id = ${challengeId} and verified_at is null and voided_at is null and account_id is not null
    returning account_id, locale`;
  if (!challenge) return undefined;
  await tx`
    insert into recovery_tokens (token_hash, challenge_id, account_id, locale, expires_at)
    values (${Buffer.from(tokenHash)}, ${challengeId}, ${challenge.accountId}, ${challenge.locale},
      now() + make_interval(secs => ${ttlSeconds}))`;
  return { accountId: challenge.accountId };
}

export interface UsableToken {
  accountId: string;
  locale: Locale;
}

/** The token's account while the token is unspent, unexpired and its account enabled. */
export async function findUsableToken(sql: Sql, tokenHash: Uint8Array): Promise<UsableToken | undefined> {
  const [row] = await sql<UsableToken[]>`
    select t.account_id, t.locale from recovery_tokens t
    join accounts a on a.id = t.account_id and a.disabled_at is null
    where t.token_hash = ${Buffer.from(tokenHash)} and t.used_at is null and t.expires_at > now()`;
  return row;
}

/**
 * Spends the token (single use: of concurrent resets with it, one gets the row) and every other
 * recovery token and open challenge of its account: a reset leaves nothing to reset with again.
 */
export async function spendToken(tx: TransactionSql, tokenHash: Uint8Array): Promise<string | undefined> {
  const [row] = await tx<{ accountId: string }[]>`
    update recovery_tokens set used_at = now()
    where token_hash = ${Buffer.from(tokenHash)} and used_at is null and expires_at > now()
    returning account_id`;
  if (!row) return undefined;
  await tx`update recovery_tokens set used_at = now() where account_id = ${row.accountId} and used_at is null`;
  await tx`
    update recovery_challenges set voided_at = now()
    where account_id = ${row.accountId} and voided_at is null and verified_at is null`;
  return row.accountId;
}

/** Challenges and tokens past use for a day, and limit rows past their window and refusal. */
export async function deleteSpent(sql: Sql, windowSeconds: number): Promise<void> {
  await sql`delete from recovery_tokens where expires_at < now() - interval '1 day'`;
  await sql`delete from recovery_challenges where expires_at < now() - interval '1 day'`;
  await sql`
    delete from recovery_limits
    where window_started_at < now() - make_interval(secs => ${windowSeconds})
      and (refused_until is null or refused_until < now())`;
}
