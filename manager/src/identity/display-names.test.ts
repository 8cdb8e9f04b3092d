import { describe, expect, it } from "vitest";
import { displayNameRefusal } from "./display-names.ts";

describe("displayNameRefusal", () => {
  it.each([
    "Shirin Ahmadi",
    "علی‌رضا", // ZWNJ between its parts
    "Zahra\u200dKarimi", // a ZWJ
    "\u200fנעמה", // an RLM before a Hebrew name
    "👩‍💻", // ZWJ emoji sequence
    "·",
    "\u0301",
  ])("takes %j", (name) => {
    expect(displayNameRefusal(name)).toBeUndefined();
  });

  it.each([
    ["", "invisible"],
    ["\u200b", "invisible"],
    ["\u200c\u200d", "invisible"],
    ["\u3164\u115f", "invisible"],
    ["\u2800", "invisible"],
    ["\ufe0f\u00ad\u2060", "invisible"],
    ["\u3000\u00a0", "invisible"],
    ["Ali\u202eevil", "bidi-override"],
    ["\u202aAli\u202c", "bidi-override"],
    ["\u2067Ali\u2069", "bidi-override"],
    ["\u202e", "bidi-override"],
  ])("refuses %j: %s", (name, refusal) => {
    expect(displayNameRefusal(name)).toBe(refusal);
  });
});
