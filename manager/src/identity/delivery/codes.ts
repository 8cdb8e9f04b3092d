/**
 * Codes as people type them. A Persian or Pashto keyboard types Persian digits (۰-۹, U+06F0…),
 * an Arabic one Arabic-Indic digits (٠-٩, U+0660…); a code sent in Latin digits must be
 * accepted either way. Every place a code is entered compares normalizeCode(input).
 */

const PERSIAN_ZERO = 0x06f0;
const ARABIC_INDIC_ZERO = 0x0660;

/**
 * The code with Persian and Arabic-Indic digits made ASCII and the spaces, hyphens and
 * direction marks people paste or type between groups removed. Anything else is kept, so a
 * wrong character still makes the code wrong.
 */
export function normalizeCode(input: string): string {
  return input
    .replace(/[\u06f0-\u06f9]/g, (digit) => String((digit.codePointAt(0) as number) - PERSIAN_ZERO))
    .replace(/[\u0660-\u0669]/g, (digit) => String((digit.codePointAt(0) as number) - ARABIC_INDIC_ZERO))
    .replace(/[\s\u200c\u200e\u200f\u061c\u2066-\u2069-]/g, "");
}
