/**
 * Reading an account's factors and its recovery codes' count, and what the enrolment, removal
 * and sign-in modules share: the masked destination, the send limit, the factor notice.
 */
import type { Sql, TransactionSql } from "../../platform/db.ts";
import { messageLocale, storedLocale } from "../accounts/message-locale.ts";
import type { Delivery } from "../delivery/index.ts";

export const FACTOR_TYPES = ["totp", "sms", "email"] as const;
export type FactorType = (typeof FACTOR_TYPES)[number];

export interface FactorDeps {
  sql: Sql;
  delivery: Pick<Delivery, "enqueueMessage" | "wake" | "channels">;
  /** The one-time-code key: codes sent and recovery codes are stored as HMACs under it. */
  oneTimeCodeKey: Buffer;
  /** MFA_SECRET_ENCRYPTION_KEY (factorSecretKey): TOTP secrets are encrypted under it. */
  secretKey: Buffer;
  /** MFA_CODE_SENDS_PER_HOUR: codes sent to one phone or e-mail address in an hour. */
  codeSendsPerHour: number;
}

/** Who asks, through which client and session, and the request's Accept-Language. */
export interface FactorRequester {
  accountId: string;
  clientId: string;
  /** The token's sid: the session that stays when the others are ended. */
  sid: string;
  acceptLanguage: string | undefined;
}

export interface Factor {
  id: string;
  type: FactorType;
  /** The phone or e-mail address with most of it hidden; null for TOTP. */
  maskedDestination: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/**
 * Enough of a destination to tell two apart, not enough to learn it: a phone's last two
 * digits, an address's first character and domain.
 */
export function maskDestination(type: FactorType, destination: string | null): string | null {
  if (destination === null || type === "totp") return null;
  if (type === "sms")
    return `${destination.slice(0, 3)}${"•".repeat(Math.max(0, destination.length - 5))}${destination.slice(-2)}`;
  const at = destination.lastIndexOf("@");
  return `${destination.slice(0, 1)}•••${destination.slice(at)}`;
}

interface FactorRow {
  id: string;
  type: FactorType;
  destination: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export const toFactor = (row: FactorRow): Factor => ({
  id: row.id,
  type: row.type,
  maskedDestination: maskDestination(row.type, row.destination),
  createdAt: row.createdAt,
  lastUsedAt: row.lastUsedAt,
});

export async function listFactors(sql: Sql | TransactionSql, accountId: string): Promise<Factor[]> {
  const rows = await sql<FactorRow[]>`
    select id, type, destination, created_at, last_used_at from mfa_factors
    where account_id = ${accountId} order by created_at, id`;
  return rows.map(toFactor);
}

export async function recoveryCodesRemaining(sql: Sql | TransactionSql, accountId: string): Promise<number> {
  const [row] = await sql<{ remaining: number }[]>`
    select count(*)::int as remaining from mfa_recovery_codes
    where account_id = ${accountId} and used_at is null`;
  return row?.remaining ?? 0;
}

export interface MfaSummary {
  enabled: boolean;
  factors: Factor[];
  recoveryCodesRemaining: number;
}

export async function mfaSummary(sql: Sql, accountId: string): Promise<MfaSummary> {
  const [factors, remaining] = await Promise.all([
    listFactors(sql, accountId),
    recoveryCodesRemaining(sql, accountId),
  ]);
  return { enabled: factors.length > 0, factors, recoveryCodesRemaining: remaining };
}

/**
 * Records one more code sent to `destination`, or answers the seconds until one may be: at most
 * `perHour` in any hour. Serialised per destination by a transaction lock, so concurrent sends
 * cannot all pass one count.
 */
export async function reserveCodeSend(
  tx: TransactionSql,
  destination: string,
  perHour: number,
): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`mfa-code-send:${destination}`}, 0))`;
  await tx`delete from mfa_code_sends where destination = ${destination} and sent_at <= now() - interval '1 hour'`;
  const [row] = await tx<{ sent: number; oldest: number | null }[]>`
    select count(*)::int as sent,
      extract(epoch from min(sent_at) + interval '1 hour' - now())::float8 as oldest
    from mfa_code_sends where destination = ${destination}`;
  if ((row?.sent ?? 0) >= perHour) {
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(row?.oldest ?? 1)) };
  }
  await tx`insert into mfa_code_sends (destination) values (${destination})`;
  return { allowed: true };
}

/** Tells the account's e-mail address that a factor was added or removed (when e-mail is sent at all). */
export async function tellFactorChanged(
  deps: Pick<FactorDeps, "delivery">,
  tx: TransactionSql,
  account: { id: string; email: string },
  acceptLanguage: string | undefined,
  params: { factor: FactorType; change: "added" | "removed" },
): Promise<boolean> {
  if (!deps.delivery.channels.has("email")) return false;
  await deps.delivery.enqueueMessage(tx, {
    channel: "email",
    recipient: account.email,
    locale: messageLocale(await storedLocale(tx, account.id), acceptLanguage),
    template: "factor-changed",
    params: { when: new Date(), ...params },
  });
  return true;
}
