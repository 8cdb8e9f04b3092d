/**
 * What a request may put in front of PostgreSQL: identifiers of bounded length without control
 * characters. PostgreSQL refuses NUL in text and an index row past ~2.7 kB; a value past these
 * bounds is refused before it reaches a statement (a 400, or "unknown" for a lookup), so no
 * input can turn into a database error and a 500.
 */

/** TJM's client ids are UUIDs (36); 255 leaves room for named ones and bounds every lookup. */
export const MAX_CLIENT_ID_LENGTH = 255;
/** oidc-provider's record ids (tokens, codes, sessions, interactions) are 21 to 43 characters. */
export const MAX_RECORD_ID_LENGTH = 255;
/**
 * The password policy allows 256 code points (identity/passwords.ts), at most 512 UTF-16 units;
 * anything longer can never be right and is refused before an expensive hash of it.
 */
export const MAX_PASSWORD_LENGTH = 1024;

/** C0 controls (NUL among them), DEL and C1 controls. */
export function hasControlCharacter(value: string): boolean {
  for (let index = 0; index < value.length; index++) {
    const unit = value.charCodeAt(index);
    if (unit <= 0x1f || (unit >= 0x7f && unit <= 0x9f)) return true;
  }
  return false;
}

/** A non-empty string of at most `maxLength` UTF-16 units without control characters. */
export function isBoundedIdentifier(value: unknown, maxLength: number): value is string {
  return (
    typeof value === "string" && value.length > 0 && value.length <= maxLength && !hasControlCharacter(value)
  );
}

/** Whether any string in a JSON-like value (keys included) holds NUL, which jsonb cannot store. */
export function containsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).some(([key, item]) => key.includes("\u0000") || containsNul(item));
  }
  return false;
}
