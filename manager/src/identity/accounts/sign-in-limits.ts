/**
 * Failed sign-ins slowed per account and per client address, counted in sign_in_failures so
 * every replica shares the counts (identity/windowed-counts.ts). An attempt is reserved (counted)
 * before its password is verified, by one statement per scope, not a read then a write that
 * concurrent attempts would each pass: concurrent wrong passwords for one account get at most
 * the limit's worth of verifications, never one each. A limit reached refuses for one window,
 * then counting starts afresh: never a permanent lock an attacker could cause.
 */
import type { Sql } from "../../platform/db.ts";
import { emailKey } from "../identifiers.ts";
import { addressKey, type Counted, checkLimitSettings, countAttempt, refusalOf } from "../windowed-counts.ts";

export { addressKey, retryAfterSeconds, storedKey } from "../windowed-counts.ts";

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

const SIGN_IN_FAILURES = { table: "sign_in_failures", countColumn: "failures" };

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

export function createSignInLimiter(sql: Sql, settings: SignInLimitSettings): SignInLimiter {
  checkLimitSettings("sign-in limit", settings);
  const limits: Record<Scope, number> = { account: settings.accountLimit, address: settings.addressLimit };
  const window = settings.windowSeconds;

  const count = (scope: Scope, key: string) =>
    countAttempt(sql, SIGN_IN_FAILURES, scope, key, limits[scope], window);

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

    addressRefusal: (address) => refusalOf(sql, SIGN_IN_FAILURES, "address", addressKey(address)),
  };
}
