/**
 * The password policy, the one check wherever a password is set (sign-up, change, recovery).
 * Pure: the common-password list is read once elsewhere (common-passwords.ts) and handed in.
 */

/** 8: the SPEC's minimum for new_password. */
export const PASSWORD_MIN_CODE_POINTS = 8;
/** 256: long enough for any passphrase, short enough to bound normalising and hashing. */
export const PASSWORD_MAX_CODE_POINTS = 256;
/**
 * A local part shorter than this is not looked for: one or two characters turn up by chance in
 * many strong passwords ("jo@…" in "major-banjo-kettle"), and guessing them gains an attacker
 * nothing.
 */
export const EMAIL_LOCAL_PART_MIN_CODE_POINTS = 3;

export const PASSWORD_PROBLEM_CODES = ["too-short", "too-long", "common", "contains-email"] as const;
export type PasswordProblemCode = (typeof PASSWORD_PROBLEM_CODES)[number];

/** One broken rule: a stable code, and the key and values of its message in the locale catalogue. */
export interface PasswordProblem {
  code: PasswordProblemCode;
  messageKey: `password.${PasswordProblemCode}`;
  params: Record<string, number>;
}

export interface PasswordContext {
  /** The account's e-mail address, when it has one. */
  email?: string | undefined;
  /** Lowercase entries (readCommonPasswords). */
  commonPasswords: ReadonlySet<string>;
}

/**
 * NFKC, as NIST SP 800-63B asks before a password is checked or hashed: a composed and a
 * decomposed "é", or full-width and ASCII letters, are the same password on every keyboard.
 */
export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

/**
 * Code points, not UTF-16 units: an emoji or a CJK Extension B character is one character to
 * the person typing it but two units, so counting units would let four emoji pass as eight
 * characters. SP 800-63B counts each code point as one character; grapheme clusters would depend
 * on the runtime's Unicode tables, so Node and Deno could disagree.
 */
export function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}

function problem(code: PasswordProblemCode, params: Record<string, number> = {}): PasswordProblem {
  return { code, messageKey: `password.${code}`, params };
}

/** The local part as typed, and without a "+tag" (RFC 5233 sub-addressing): both name the person. */
function emailNames(email: string): string[] {
  const at = email.lastIndexOf("@");
  const localPart = normalizePassword(at < 0 ? email : email.slice(0, at)).toLowerCase();
  const untagged = localPart.split("+")[0] ?? localPart;
  return [...new Set([localPart, untagged])].filter(
    (name) => codePointLength(name) >= EMAIL_LOCAL_PART_MIN_CODE_POINTS,
  );
}

/** Every rule the password breaks, in the order of PASSWORD_PROBLEM_CODES; empty when it may be set. */
export function passwordProblems(password: string, context: PasswordContext): PasswordProblem[] {
  const normalized = normalizePassword(password);
  const folded = normalized.toLowerCase();
  const length = codePointLength(normalized);
  const problems: PasswordProblem[] = [];
  if (length < PASSWORD_MIN_CODE_POINTS)
    problems.push(problem("too-short", { minimum: PASSWORD_MIN_CODE_POINTS }));
  if (length > PASSWORD_MAX_CODE_POINTS)
    problems.push(problem("too-long", { maximum: PASSWORD_MAX_CODE_POINTS }));
  if (context.commonPasswords.has(folded)) problems.push(problem("common"));
  if (context.email !== undefined && emailNames(context.email).some((name) => folded.includes(name)))
    problems.push(problem("contains-email"));
  return problems;
}
