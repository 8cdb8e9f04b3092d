/** Values no schema allows, for parameters and bodies: text that breaks parsers and any JSON at all. */
import fc from "fast-check";

/** Text that breaks parsers: any grapheme, lone surrogates, control and direction characters. */
const hostileCharacter = fc.oneof(
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)),
  fc.constantFrom(
    "\u0000",
    "\u001f",
    "\u202e",
    "\ufeff",
    "/",
    "?",
    "#",
    "%",
    "%00",
    "'",
    '"',
    "\\",
    ",",
    "&",
    "=",
  ),
);
export const hostileText = fc.string({ unit: hostileCharacter, maxLength: 24 });

const oddNumber = fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, -(2 ** 31) - 1, 0.5, -0, 5e-324);

export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: oddNumber },
  { weight: 1, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, "", [], {}) },
);
