/**
 * What a name shown to people may hold: an account's name, a client's and a developer app's
 * (the consent page shows the last two to people deciding whether to trust them). Pure.
 *
 * - Something visible: a name of only spaces, zero-width characters or fillers shows as nothing,
 *   and passes for no one or for anyone.
 * - No bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069): they reorder
 *   the text around them, so a name can display as other text (CVE-2021-42574). The marks
 *   (LRM, RLM, ALM) stay: they set the direction of the neutral characters beside them only.
 * - ZWNJ and ZWJ (U+200C, U+200D) stay: Persian and Pashto names need the non-joiner
 *   ("علی‌رضا"), and the joiner makes some letters and emoji sequences; they are invisible, so
 *   a name of them alone has nothing visible.
 */

export type DisplayNameRefusal = "invisible" | "bidi-override";

const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
/**
 * What shows as nothing: spaces (White_Space), characters that render nothing unless supported
 * (Default_Ignorable_Code_Point: zero-width characters, variation selectors, Hangul fillers,
 * tags), other format characters (Cf), controls, and the blank Braille pattern U+2800.
 */
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\u2800]*$/u;

export function displayNameRefusal(name: string): DisplayNameRefusal | undefined {
  if (BIDI_CONTROL.test(name)) return "bidi-override";
  if (INVISIBLE_ONLY.test(name)) return "invisible";
  return undefined;
}

/** The refusal as a 400 detail's code and message (the field's path is the caller's). */
export const DISPLAY_NAME_REFUSALS = {
  invisible: {
    code: "name.invisible",
    message: "must have a visible character (not only spaces or invisible characters)",
  },
  "bidi-override": {
    code: "name.bidi_override",
    message: "must not hold bidirectional embeddings, overrides or isolates (U+202A–U+202E, U+2066–U+2069)",
  },
} as const satisfies Record<DisplayNameRefusal, { code: string; message: string }>;
