/**
 * The one spelling of an identifier (docs/identifiers.md). Every place that compares, counts or
 * stores an e-mail address as an identifier uses emailKey: the accounts' unique email_key
 * column, sign-in lookups, the command line, the per-account sign-in limit and the migration
 * that keyed the rows stored before it. Pure, and computed here only: PostgreSQL's lower()
 * and JavaScript's toLowerCase disagree on letters such as `İ`, and an identifier spelled two
 * ways was two budgets of the sign-in limit.
 */
import { parsePhoneNumberFromString } from "libphonenumber-js/max";

/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets, the address in it 254 once `<>` are counted. */
export const MAX_EMAIL_LENGTH = 254;

export type InvalidIdentifierReason = "too-long" | "not-text";

export class InvalidIdentifierError extends Error {
  constructor(readonly reason: InvalidIdentifierReason) {
    super(
      reason === "too-long"
        ? `an e-mail address is at most ${MAX_EMAIL_LENGTH} characters once normalised`
        : "an e-mail address holds only assigned Unicode characters, no control characters",
    );
  }
}

/**
 * Refused before normalising: a control character (NUL cannot be stored in PostgreSQL text), a
 * lone surrogate (the driver would store U+FFFD, another identifier than the one keyed here)
 * and an unassigned code point (a later Unicode version may give it a case or a decomposition,
 * and the key stored today would no longer be the one computed then).
 */
const NOT_TEXT = /[\p{Cc}\p{Cs}\p{Cn}]/u;

/** Removed as NFKC_Casefold removes them: invisible, so never a difference a reader can see. */
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * Full case folding of one code point, from the runtime's own Unicode case mappings: lower,
 * upper, lower. Lowering first takes `ẞ` to `ß` so that upper gives `SS` like `ß` does; upper
 * then folds what lowercase keeps apart (`ς` → `Σ` → `σ`, `ᾳ` → `ΑΙ` → `αι`); one code point
 * at a time, so the final-sigma rule of toLowerCase, which looks at the neighbours, never applies.
 * The one difference from Unicode's CaseFolding.txt: the dotless `ı` folds to `i` (Unicode keeps
 * it apart for Turkic text), which can only merge identifiers that look alike, never split one.
 */
function foldCodePoint(codePoint: string): string {
  return codePoint.toLowerCase().toUpperCase().toLowerCase();
}

/**
 * The key of an e-mail address: NFKC, case folded, default ignorables removed, NFKC again (the
 * folding can leave an uncomposed sequence), whitespace trimmed; at most MAX_EMAIL_LENGTH code
 * points. Close to Unicode's NFKC_Casefold (UAX #31, as PRECIS and IDNA use it). Idempotent:
 * the key of a key is itself. Throws InvalidIdentifierError rather than keying what no account
 * can have.
 */
export function emailKey(email: string): string {
  const key = keyOrReason(email);
  if (typeof key !== "string") throw new InvalidIdentifierError(key.reason);
  return key;
}

/** Why no account can have this address, or undefined when one can: for callers that answer a refusal. */
export function emailKeyProblem(email: string): InvalidIdentifierError | undefined {
  const key = keyOrReason(email);
  return typeof key === "string" ? undefined : new InvalidIdentifierError(key.reason);
}

function keyOrReason(email: string): string | { reason: InvalidIdentifierReason } {
  const trimmed = email.trim();
  if (NOT_TEXT.test(trimmed)) return { reason: "not-text" };
  // A megabyte is refused without folding it. Four UTF-16 units a character: room for an
  // address of the longest length typed with combining marks, or outside the BMP.
  if (trimmed.length > MAX_EMAIL_LENGTH * 4) return { reason: "too-long" };
  const folded = Array.from(trimmed.normalize("NFKC"), foldCodePoint).join("");
  const key = folded.replace(DEFAULT_IGNORABLE, "").normalize("NFKC").trim();
  return codePointCount(key) > MAX_EMAIL_LENGTH ? { reason: "too-long" } : key;
}

function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** E.164: a plus, a country code and at most 15 digits in all (the accounts.phone check). */
const E164 = /^\+[1-9][0-9]{6,14}$/;

/**
 * A phone number in E.164, the one form TJM stores, sends SMS to and compares; undefined when
 * the text is not a valid number. International form only (`+98 912 …`): an account has no
 * country to read a national number in. Persian and Arabic-Indic digits parse as their Latin
 * ones. `libphonenumber-js/max`: the default metadata checks lengths only, and would accept
 * numbers no operator assigns.
 */
export function phoneNumber(text: string): string | undefined {
  const parsed = parsePhoneNumberFromString(text.trim());
  if (!parsed?.isValid()) return undefined;
  return E164.test(parsed.number) ? parsed.number : undefined;
}
