/**
 * Counting attempts in fixed windows in PostgreSQL, shared by every replica: the one statement
 * behind the sign-in limits (accounts/sign-in-limits.ts) and the recovery limits
 * (recovery/limits.ts). An attempt is counted before the work it limits, by ONE statement per
 * scope (not a read then a write, which concurrent attempts would each pass), so concurrent
 * attempts get at most the limit's worth, never one each. A
 * limit passed refuses for one window, then counting starts afresh: never a permanent lock an
 * attacker could cause.
 */
import { createHash } from "node:crypto";
import type { Sql } from "../platform/db.ts";
import { hasControlCharacter } from "./input-bounds.ts";

/**
 * Keys longer than this are stored as their hash: PostgreSQL refuses an index entry past ~2.7 kB
 * (a third of a page), and the key is part of the primary key.
 */
const MAX_STORED_KEY_BYTES = 512;

/**
 * The key as stored: itself when it is short text, else its SHA-256. Callers bound what they
 * pass (an e-mail is at most 254 characters), but no key may turn a counted attempt into a
 * database error: an over-long or NUL-carrying key counts under its hash.
 */
export function storedKey(key: string): string {
  if (Buffer.byteLength(key) <= MAX_STORED_KEY_BYTES && !hasControlCharacter(key)) return key;
  return `sha256:${createHash("sha256").update(key).digest("hex")}`;
}

/** Seconds until a refusal ends, as a Retry-After wants them: whole, and at least one. */
export function retryAfterSeconds(refusedForSeconds: number | null | undefined): number {
  return Math.max(1, Math.ceil(refusedForSeconds ?? 0));
}

/** The address key: its text, with an IPv4-mapped IPv6 address (dual-stack sockets) as IPv4. */
export function addressKey(address: string): string {
  const text = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/.exec(text);
  return mapped ? (mapped[1] as string) : text;
}

/** Where a feature keeps its counts: a table of (scope, key, window_started_at, <count>, refused_until). */
export interface CountTable {
  table: string;
  countColumn: string;
}

export interface Counted {
  /** The key as stored. */
  key: string;
  /**
   * The window the attempt was counted in, so a late success leaves a newer one alone. Text, as
   * PostgreSQL prints it: a Date would lose the microseconds and never compare equal.
   */
  windowStartedAt: string;
}

export type CountResult = Counted | { refusedForSeconds: number };

/**
 * Counts one attempt of `key` in `scope` and decides. A row still refusing is left alone and
 * returns nothing. A window that has passed, or a refusal that has ended, starts afresh at one.
 * Else the count goes up, and past `limit` refused_until is set: this attempt is the first refused.
 */
export async function countAttempt(
  sql: Sql,
  where: CountTable,
  scope: string,
  typedKey: string,
  limit: number,
  windowSeconds: number,
): Promise<CountResult> {
  const key = storedKey(typedKey);
  const table = sql(where.table);
  const count = sql(where.countColumn);
  const windowLength = sql`make_interval(secs => ${windowSeconds})`;
  const startsAfresh = sql`(f.window_started_at <= now() - ${windowLength} or coalesce(f.refused_until <= now(), false))`;
  const [row] = await sql<{ windowStartedAt: string; refusedForSeconds: number | null }[]>`
    insert into ${table} as f (scope, key) values (${scope}, ${key})
    on conflict (scope, key) do update set
      ${count} = case when ${startsAfresh} then 1 else f.${count} + 1 end,
      window_started_at = case when ${startsAfresh} then now() else f.window_started_at end,
      refused_until = case when not ${startsAfresh} and f.${count} + 1 > ${limit} then now() + ${windowLength} end
    where f.refused_until is null or f.refused_until <= now()
    returning window_started_at::text, extract(epoch from refused_until - now())::float8 as refused_for_seconds`;
  if (row && row.refusedForSeconds === null) return { key, windowStartedAt: row.windowStartedAt };
  if (row) return { refusedForSeconds: retryAfterSeconds(row.refusedForSeconds) };
  // Read in a statement of its own: the refusal may have been committed by a concurrent
  // attempt after the statement above took its snapshot.
  const [refusal] = await sql<{ seconds: number | null }[]>`
    select extract(epoch from refused_until - now())::float8 as seconds
    from ${table} where scope = ${scope} and key = ${key}`;
  return { refusedForSeconds: retryAfterSeconds(refusal?.seconds) };
}

/** Seconds until `key`'s refusal in `scope` ends, undefined when it is not refused. Counts nothing. */
export async function refusalOf(
  sql: Sql,
  where: CountTable,
  scope: string,
  typedKey: string,
): Promise<number | undefined> {
  const [refusal] = await sql<{ seconds: number }[]>`
    select extract(epoch from refused_until - now())::float8 as seconds
    from ${sql(where.table)}
    where scope = ${scope} and key = ${storedKey(typedKey)} and refused_until > now()`;
  return refusal === undefined ? undefined : retryAfterSeconds(refusal.seconds);
}

/** A positive whole number for every setting, or a start-up error naming the one that is not. */
export function checkLimitSettings(what: string, settings: object): void {
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new Error(`${what} setting ${name} must be a positive integer, got ${value}`);
    }
  }
}
