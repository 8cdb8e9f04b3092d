/**
 * What a recovery request names: a channel and an identifier on it, keyed once. Pure. The key is
 * the same for every spelling of one identifier, so the challenges and the limits of "Ann@X.org"
 * and "ann@x.org" (or of "+98 912 …" typed in Persian digits and "+98912…") are shared.
 */
import type { Channel } from "../delivery/index.ts";
import { normalizeCode } from "../delivery/index.ts";
import { emailKey, emailKeyProblem } from "../identifiers.ts";

/** The channel values of the API (SPEC: EMAIL is a known value; SMS goes to a verified phone). */
export const RECOVERY_CHANNELS = ["EMAIL", "SMS"] as const;
export type RecoveryChannel = (typeof RECOVERY_CHANNELS)[number];

export function deliveryChannel(channel: RecoveryChannel): Channel {
  return channel === "EMAIL" ? "email" : "sms";
}

/** E.164, as accounts.phone stores it. */
const E164 = /^\+[1-9][0-9]{6,14}$/;

/**
 * A phone number as stored: Persian and Arabic-Indic digits made ASCII, the spaces, hyphens,
 * dots, parentheses and direction marks people type between groups removed, `00` read as `+`.
 * Undefined when what is left is not E.164.
 */
export function phoneKey(typed: string): string | undefined {
  const compact = normalizeCode(typed).replace(/[.()]/g, "");
  const international = compact.startsWith("00") ? `+${compact.slice(2)}` : compact;
  return E164.test(international) ? international : undefined;
}

/** What is wrong with the identifier for its channel, undefined when an account could have it. */
export function identifierProblem(channel: RecoveryChannel, identifier: string): string | undefined {
  if (channel === "SMS") {
    return phoneKey(identifier) === undefined
      ? "must be a phone number in international form (+ and country code)"
      : undefined;
  }
  const problem = emailKeyProblem(identifier);
  if (problem) return problem.message;
  return /^[^@\s]+@[^@\s]+$/u.test(identifier.trim()) ? undefined : "must be an e-mail address";
}

/**
 * The identifier's key, prefixed with its channel (`email:…`, `sms:+…`): what challenges and
 * the per-identifier limits are stored under. Call after identifierProblem found none.
 */
export function recoveryIdentifierKey(channel: RecoveryChannel, identifier: string): string {
  if (channel === "SMS") return `sms:${phoneKey(identifier) as string}`;
  return `email:${emailKey(identifier)}`;
}
