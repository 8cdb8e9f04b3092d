/**
 * Password recovery's rate limits, counted in recovery_limits (identity/windowed-counts.ts, the
 * sign-in limits' statement): every replica shares them, and an attempt is counted before the
 * work it limits, by one statement per scope. The keys are the identifier's and the address's,
 * never the account's: an identifier no account has is counted and refused exactly like one an
 * account has. Codes typed are counted per identifier and per address across challenges, so
 * asking for a new code buys no more guesses.
 */
import type { Sql } from "../../platform/db.ts";
import { addressKey, type CountResult, checkLimitSettings, countAttempt } from "../windowed-counts.ts";

export interface RecoveryLimitSettings {
  /** Codes asked for per identifier in a window (RECOVERY_REQUEST_IDENTIFIER_LIMIT). */
  requestsPerIdentifier: number;
  /** Codes asked for per client address (RECOVERY_REQUEST_ADDRESS_LIMIT). */
  requestsPerAddress: number;
  /** Codes typed per identifier, across its challenges (RECOVERY_CODE_IDENTIFIER_LIMIT). */
  codesPerIdentifier: number;
  /** Codes typed per client address, across identifiers (RECOVERY_CODE_ADDRESS_LIMIT). */
  codesPerAddress: number;
  /** Messages sent to one e-mail address or phone (RECOVERY_DESTINATION_MESSAGE_LIMIT). */
  messagesPerDestination: number;
  /** Password resets tried per client address (RECOVERY_RESET_ADDRESS_LIMIT). */
  resetsPerAddress: number;
  /** The counting window, and how long a refusal lasts (RECOVERY_LIMIT_WINDOW_SECONDS). */
  windowSeconds: number;
}

export const DEFAULT_RECOVERY_LIMITS: RecoveryLimitSettings = {
  requestsPerIdentifier: 5,
  requestsPerAddress: 30,
  codesPerIdentifier: 10,
  codesPerAddress: 50,
  messagesPerDestination: 5,
  resetsPerAddress: 30,
  windowSeconds: 3600,
};

const RECOVERY_LIMITS = { table: "recovery_limits", countColumn: "attempts" };

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RecoveryLimiter {
  /** A code request: the address, then the identifier. */
  request(identifierKey: string, address: string): Promise<LimitDecision>;
  /** A code typed: the address, then the identifier. */
  code(identifierKey: string, address: string): Promise<LimitDecision>;
  /** A message about to be sent to `destination` (channel:recipient), off the request path. */
  message(destination: string): Promise<LimitDecision>;
  /** A password reset tried from the address. */
  reset(address: string): Promise<LimitDecision>;
}

function decision(results: CountResult[]): LimitDecision {
  const refused = results.find((result) => "refusedForSeconds" in result);
  return refused && "refusedForSeconds" in refused
    ? { allowed: false, retryAfterSeconds: refused.refusedForSeconds }
    : { allowed: true };
}

export function createRecoveryLimiter(sql: Sql, settings: RecoveryLimitSettings): RecoveryLimiter {
  checkLimitSettings("recovery limit", settings);
  const count = (scope: string, key: string, limit: number) =>
    countAttempt(sql, RECOVERY_LIMITS, scope, key, limit, settings.windowSeconds);
  /** Both scopes, always both: the statements a request issues never depend on a refusal. */
  const pair = async (
    scope: "request" | "guess",
    identifierKey: string,
    address: string,
    limits: [number, number],
  ) =>
    decision([
      await count(`${scope}-address`, addressKey(address), limits[0]),
      await count(`${scope}-identifier`, identifierKey, limits[1]),
    ]);
  return {
    request: (identifierKey, address) =>
      pair("request", identifierKey, address, [settings.requestsPerAddress, settings.requestsPerIdentifier]),
    code: (identifierKey, address) =>
      pair("guess", identifierKey, address, [settings.codesPerAddress, settings.codesPerIdentifier]),
    message: async (destination) =>
      decision([await count("destination", destination, settings.messagesPerDestination)]),
    reset: async (address) =>
      decision([await count("reset-address", addressKey(address), settings.resetsPerAddress)]),
  };
}
