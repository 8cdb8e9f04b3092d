/**
 * One-time codes people receive and type back: verifying a new e-mail or phone, recovering a
 * password, SMS and e-mail factors. Six digits from the CSPRNG, stored only as an HMAC bound to
 * the challenge they were issued for (a code leaked from one challenge proves nothing in
 * another), compared in constant time after normalizeCode (Persian and Arabic-Indic digits).
 *
 * Each feature keeps its own challenges and counts a try with ONE conditional statement before
 * comparing (`update … set attempts = attempts + 1 where … and attempts < max returning …`), so
 * concurrent wrong codes get at most `max` comparisons: a count read and then written would let
 * each of them read it under `max`.
 */
import { createHmac, hkdfSync, randomInt, timingSafeEqual } from "node:crypto";
import { normalizeCode } from "./delivery/codes.ts";

export const ONE_TIME_CODE_DIGITS = 6;
/** How long a code is valid. */
export const ONE_TIME_CODE_TTL_SECONDS = 600;
/** Wrong codes one challenge accepts before it is void. */
export const ONE_TIME_CODE_MAX_ATTEMPTS = 5;

export function generateOneTimeCode(digits: number = ONE_TIME_CODE_DIGITS): string {
  let code = "";
  for (let index = 0; index < digits; index++) code += String(randomInt(10));
  return code;
}

/** The key codes are stored under: ONE_TIME_CODE_HMAC_KEY, or one derived from the root given. */
export function oneTimeCodeKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "", "tjm/one-time-codes", 32));
}

/** What a challenge stores: the HMAC of the code under the key, bound to the challenge's id. */
export function oneTimeCodeHmac(key: Buffer, challengeId: string, code: string): string {
  return createHmac("sha256", key).update(challengeId).update("\0").update(normalizeCode(code)).digest("hex");
}

export function oneTimeCodeMatches(
  key: Buffer,
  challengeId: string,
  typed: string,
  storedHmac: string,
): boolean {
  const typedHmac = Buffer.from(oneTimeCodeHmac(key, challengeId, typed), "hex");
  const stored = Buffer.from(storedHmac, "hex");
  return stored.length === typedHmac.length && timingSafeEqual(stored, typedHmac);
}
