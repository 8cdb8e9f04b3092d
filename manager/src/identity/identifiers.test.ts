import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  emailKey,
  emailKeyProblem,
  InvalidIdentifierError,
  MAX_EMAIL_LENGTH,
  phoneNumber,
} from "./identifiers.ts";

/** Spellings that are one identifier: every one of a row has the row's first key. */
const SAME_IDENTIFIER: [string, string[]][] = [
  ["case", ["ada@example.com", "ADA@EXAMPLE.COM", "Ada@Example.Com"]],
  ["surrounding spaces", ["ada@example.com", "  ada@example.com\t", "\u3000ada@example.com\u00a0"]],
  ["compatibility forms (NFKC)", ["ada@example.com", "ａｄａ@ｅｘａｍｐｌｅ.ｃｏｍ", "ªda@example.com"]],
  ["the Kelvin and Ohm signs", ["kω@example.com", "\u212a\u2126@example.com", "KΩ@example.com"]],
  ["ligatures", ["file@example.com", "\ufb01le@example.com", "FILE@example.com"]],
  ["sharp s", ["strasse@example.com", "straße@example.com", "STRASSE@example.com", "straẞe@example.com"]],
  ["Greek sigma, final or not", ["οδοσ@example.com", "οδος@example.com", "ΟΔΟΣ@example.com"]],
  ["iota subscript", ["αι@example.com", "ᾳ@example.com", "ΑΙ@example.com"]],
  [
    "dotted capital I and i with a combining dot",
    ["i\u0307x@example.com", "İx@example.com", "I\u0307x@example.com"],
  ],
  ["dotless i folds to i", ["ix@example.com", "ıx@example.com", "Ix@example.com"]],
  ["composed and decomposed accents", ["éa@example.com", "e\u0301a@example.com", "É\u0041@example.com"]],
  ["invisible characters", ["ada@example.com", "a\u200bda@example.com", "ad\u00ada@exa\u200dmple.com"]],
];

/** Text mixing arbitrary Unicode with the letters case mappings and NFKC treat specially. */
const trickyText = fc
  .array(
    fc.oneof(
      fc.constantFrom(..."İıiI\u0307ßẞςσΣﬁͅᾳKΩ\u0301\u200b\u00ad \u3000ǅǰΐŉ\ufdfaꭰᎠſµϐẛ¨´ｉＩ"),
      fc.string({ unit: "binary", maxLength: 3 }),
      fc.string({ unit: "grapheme", maxLength: 2 }),
    ),
    { maxLength: 20 },
  )
  .map((parts) => parts.join(""));

/** Spellings that are different identifiers, and whose difference someone may rely on. */
const DIFFERENT_IDENTIFIERS: [string, string, string][] = [
  ["i and i with a dot above", "ix@example.com", "İx@example.com"],
  ["an accent", "ea@example.com", "éa@example.com"],
  ["a plus tag", "ada@example.com", "ada+tjm@example.com"],
  ["a space inside", "a da@example.com", "ada@example.com"],
];

describe("emailKey", () => {
  it.each(SAME_IDENTIFIER)("gives one key to every spelling: %s", (_, spellings) => {
    const keys = new Set(spellings.map(emailKey));
    expect([...keys]).toEqual([emailKey(spellings[0] as string)]);
  });

  it.each(DIFFERENT_IDENTIFIERS)("keeps apart %s", (_, one, other) => {
    expect(emailKey(one)).not.toBe(emailKey(other));
  });

  it("is lower-case NFKC text without surrounding spaces", () => {
    expect(emailKey("  Ada.Lovelace+TJM@Example.COM\n")).toBe("ada.lovelace+tjm@example.com");
  });

  it("is idempotent over any text: the key of a key is itself", () => {
    fc.assert(
      fc.property(trickyText, (text) => {
        fc.pre(emailKeyProblem(text) === undefined);
        expect(emailKey(emailKey(text))).toBe(emailKey(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("never throws anything but InvalidIdentifierError, and agrees with emailKeyProblem", () => {
    fc.assert(
      fc.property(trickyText, (text) => {
        const problem = emailKeyProblem(text);
        if (problem) expect(() => emailKey(text)).toThrow(InvalidIdentifierError);
        else expect(typeof emailKey(text)).toBe("string");
      }),
      { numRuns: 2000 },
    );
  });

  it(`accepts ${MAX_EMAIL_LENGTH} characters once normalised and refuses one more`, () => {
    const local = "a".repeat(MAX_EMAIL_LENGTH - "@example.com".length);
    expect(emailKey(`${local}@example.com`)).toHaveLength(MAX_EMAIL_LENGTH);
    expect(emailKeyProblem(`${local}a@example.com`)?.reason).toBe("too-long");
    // Astral characters count once each, as PostgreSQL's char_length counts them.
    const astral = "𝒶".repeat(MAX_EMAIL_LENGTH - "@example.com".length);
    expect(emailKey(`${astral}@example.com`)).toHaveLength(MAX_EMAIL_LENGTH);
  });

  it("measures after normalisation: a short address that NFKC expands past the bound is refused", () => {
    // U+FDFA is one character as typed, eighteen once NFKC has expanded it.
    const typed = `${"\ufdfa".repeat(15)}@example.com`;
    expect(typed.length).toBeLessThan(MAX_EMAIL_LENGTH);
    expect(emailKeyProblem(typed)?.reason).toBe("too-long");
  });

  it("refuses a megabyte without folding it", () => {
    expect(emailKeyProblem(`${"a".repeat(1_000_000)}@example.com`)?.reason).toBe("too-long");
  });

  it.each([
    ["NUL", "a\u0000b@example.com"],
    ["another control character", "a\u001fb@example.com"],
    ["a lone surrogate", "a\ud800b@example.com"],
    ["an unassigned code point", "a\u0378b@example.com"],
  ])("refuses %s, which no account can hold", (_, email) => {
    expect(emailKeyProblem(email)?.reason).toBe("not-text");
    expect(() => emailKey(email)).toThrow(InvalidIdentifierError);
  });
});

describe("phoneNumber", () => {
  it.each([
    ["+98 912 345 6789", "+989123456789"],
    ["+۹۸ ۹۱۲ ۳۴۵ ۶۷۸۹", "+989123456789"],
    ["+٩٨ ٩١٢ ٣٤٥ ٦٧٨٩", "+989123456789"],
    ["+93 70 123 4567", "+93701234567"],
    [" +1 (202) 555-0143 ", "+12025550143"],
  ])("stores %s as %s (E.164)", (typed, stored) => {
    expect(phoneNumber(typed)).toBe(stored);
  });

  it.each([
    ["a national number (no country to read it in)", "0912 345 6789"],
    ["a number no operator has", "+98 000 000 0000"],
    ["too short", "+98 912"],
    ["letters", "call me"],
    ["empty", ""],
  ])("refuses %s", (_, typed) => {
    expect(phoneNumber(typed)).toBeUndefined();
  });
});
