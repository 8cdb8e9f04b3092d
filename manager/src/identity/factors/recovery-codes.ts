/**
 * Recovery codes: ten per set, each 120 bits from the CSPRNG written as 24 base32 characters in
 * groups of four (people copy them on paper), stored only as HMAC-SHA-256 under the one-time-code
 * key, each used once. Typed back, case, spaces and hyphens do not matter. Pure: no I/O.
 */
import { createHmac, randomBytes } from "node:crypto";

export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_CODE_BYTES = 15;
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let text = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return text;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    (base32(randomBytes(RECOVERY_CODE_BYTES)).match(/.{4}/g) as string[]).join("-"),
  );
}

/** The comparable form: upper case, without the spaces and hyphens between groups. */
export function normalizeRecoveryCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s\u200c\u200e\u200f-]/g, "");
}

export function recoveryCodeHmac(key: Buffer, accountId: string, typed: string): string {
  return createHmac("sha256", key)
    .update("recovery-code\0")
    .update(accountId)
    .update("\0")
    .update(normalizeRecoveryCode(typed))
    .digest("hex");
}
