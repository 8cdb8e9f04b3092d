/**
 * Failed sign-ins slowed per account and per client address, counted in sign_in_failures so
 * every replica shares the counts. An attempt is reserved (counted) before its password is
 * verified, by one statement per scope (STYLE 13): concurrent wrong passwords for one account
 * get at most the limit's worth of verifications, never one each. A limit reached refuses for
 * one window, then counting starts afresh: never a permanent lock an attacker could cause.
 */
import { createHash } from "node:crypto";
import type { Sql } from "../../platform/db.ts";
import { emailKey } from "../identifiers.ts";
import { hasControlCharacter } from "../input-bounds.ts";

export interface SignInLimitSettings {
  /** Failures per account in a window before refusals. */
  accountLimit: number;
  /** Failures per client address in a window before refusals. */
  addressLimit: number;
  /** The counting window, and how long refusals last once a limit is passed. */
  windowSeconds: number;
}

/** Issue 12: 10 per account and 100 per address in 15 minutes. */
export const DEFAULT_SIGN_IN_LIMITS: SignInLimitSettings = {
  accountLimit: 10,
  addressLimit: 100,
  windowSeconds: 900,
};

type Scope = "account" | "address";

interface Counted {
  key: string;
  /**
   * The window the attempt was counted in, so a late success leaves a newer one alone. Text, as
   * PostgreSQL prints it: a Date would lose the microseconds and never compare equal.
   */
  windowStartedAt: string;
}

/** An attempt counted against both scopes, to be settled by succeeded() or failed(). */
export interface Reservation {
  readonly account: Counted;
  /** Undefined when only the account was counted. */
  readonly address: Counted | undefined;
}

export type ReserveResult =
  | { allowed: true; reservation: Reservation }
  | { allowed: false; retryAfterSeconds: number };

export interface SignInLimiter {
  /**
   * Counts the attempt, address first; refused, it has counted nothing for the account. Without
   * an address only the account is counted: a signed-in account's password check (the portal's
   * password change), where the token, not the network address, names who tries.
   */
  reserve(attempt: { email: string; address: string | undefined }): Promise<ReserveResult>;
  /** The password was right: the account's count is cleared, the address's attempt given back. */
  succeeded(reservation: Reservation): Promise<void>;
  /** The password was wrong: the reservation already counted it. */
  failed(reservation: Reservation): Promise<void>;
  /**
   * Seconds until the address's refusal ends, undefined when it is not refused: read before
   * the form is, so a refused address has none of its body read. Counts nothing.
   */
  addressRefusal(address: string): Promise<number | undefined>;
}

/**
 * The account key: the e-mail address's key (identity/identifiers.ts), the very one that finds
 * the account, so every spelling of an address shares one budget; whether or not an account has
 * it, so an unknown address is limited exactly like a known one. Throws InvalidIdentifierError
 * for an address no account can have.
 */
export function accountKey(email: string): string {
  return emailKey(email);
}

/** The address key: its text, with an IPv4-mapped IPv6 address (dual-stack sockets) as IPv4. */
export function addressKey(address: string): string {
  const text = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/.exec(text);
  return mapped ? (mapped[1] as string) : text;
}

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

function checkSettings(settings: SignInLimitSettings): void {
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new Error(`sign-in limit setting ${name} must be a positive integer, got ${value}`);
    }
  }
}

export function createSignInLimiter(sql: Sql, settings: SignInLimitSettings): SignInLimiter {
  checkSettings(settings);
  const limits: Record<Scope, number> = { account: settings.accountLimit, address: settings.addressLimit };
  const window = settings.windowSeconds;

  /**
   * One statement counts and decides. A row still refusing is left alone and returns nothing.
   * A window that has passed, or a refusal that has ended, starts afresh at one failure. Else
   * the count goes up, and past the limit refused_until is set: this attempt is the first refused.
   */
  async function count(scope: Scope, typedKey: string): Promise<Counted | { refusedForSeconds: number }> {
    const key = storedKey(typedKey);
    const windowLength = sql`make_interval(secs => ${window})`;
    const startsAfresh = sql`(f.window_started_at <= now() - ${windowLength} or coalesce(f.refused_until <= now(), false))`;
    const [row] = await sql<{ windowStartedAt: string; refusedForSeconds: number | null }[]>`
      insert into sign_in_failures as f (scope, key) values (${scope}, ${key})
      on conflict (scope, key) do update set
        failures = case when ${startsAfresh} then 1 else f.failures + 1 end,
        window_started_at = case when ${startsAfresh} then now() else f.window_started_at end,
        refused_until = case when not ${startsAfresh} and f.failures + 1 > ${limits[scope]} then now() + ${windowLength} end
      where f.refused_until is null or f.refused_until <= now()
      returning window_started_at::text, extract(epoch from refused_until - now())::float8 as refused_for_seconds`;
    if (row && row.refusedForSeconds === null) return { key, windowStartedAt: row.windowStartedAt };
    if (row) return { refusedForSeconds: retryAfterSeconds(row.refusedForSeconds) };
    // Read in a statement of its own: the refusal may have been committed by a concurrent
    // attempt after the statement above took its snapshot.
    const [refusal] = await sql<{ seconds: number | null }[]>`
      select extract(epoch from refused_until - now())::float8 as seconds
      from sign_in_failures where scope = ${scope} and key = ${key}`;
    return { refusedForSeconds: retryAfterSeconds(refusal?.seconds) };
  }

  return {
    async reserve(attempt) {
      // Keyed first: an address that has no key is refused before anything is counted.
      const accountScope = accountKey(attempt.email);
      const address =
        attempt.address === undefined ? undefined : await count("address", addressKey(attempt.address));
      if (address && "refusedForSeconds" in address) {
        return { allowed: false, retryAfterSeconds: address.refusedForSeconds };
      }
      const account = await count("account", accountScope);
      if ("refusedForSeconds" in account) {
        return { allowed: false, retryAfterSeconds: account.refusedForSeconds };
      }
      return { allowed: true, reservation: { account, address } };
    },

    async succeeded(reservation) {
      await sql`delete from sign_in_failures where scope = 'account' and key = ${reservation.account.key}`;
      if (reservation.address === undefined) return;
      await sql`
        update sign_in_failures set failures = failures - 1
        where scope = 'address' and key = ${reservation.address.key} and failures > 1
          and window_started_at::text = ${reservation.address.windowStartedAt}`;
    },

    async failed() {},

    async addressRefusal(address) {
      const [refusal] = await sql<{ seconds: number }[]>`
        select extract(epoch from refused_until - now())::float8 as seconds
        from sign_in_failures
        where scope = 'address' and key = ${storedKey(addressKey(address))} and refused_until > now()`;
      return refusal === undefined ? undefined : retryAfterSeconds(refusal.seconds);
    },
  };
}
