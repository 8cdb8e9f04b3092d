import { describe, expect, it } from "vitest";
import {
  generateOneTimeCode,
  oneTimeCodeHmac,
  oneTimeCodeKey,
  oneTimeCodeMatches,
} from "./one-time-codes.ts";

const key = oneTimeCodeKey("a root secret of at least thirty-two characters");

describe("one-time codes", () => {
  it("are six decimal digits, every digit used", () => {
    const codes = Array.from({ length: 2000 }, () => generateOneTimeCode());
    for (const code of codes) expect(code).toMatch(/^\d{6}$/);
    expect(new Set(codes.join(""))).toEqual(new Set("0123456789"));
    expect(new Set(codes).size).toBeGreaterThan(1900);
  });

  it("match the code typed in Latin, Persian or Arabic-Indic digits, with spaces", () => {
    const stored = oneTimeCodeHmac(key, "challenge-1", "042917");
    for (const typed of ["042917", "۰۴۲۹۱۷", "٠٤٢٩١٧", "042 917", "۰۴۲-۹۱۷"]) {
      expect(oneTimeCodeMatches(key, "challenge-1", typed, stored)).toBe(true);
    }
  });

  it("refuse another code, another challenge's code, another key and a malformed store", () => {
    const stored = oneTimeCodeHmac(key, "challenge-1", "042917");
    expect(oneTimeCodeMatches(key, "challenge-1", "042918", stored)).toBe(false);
    expect(oneTimeCodeMatches(key, "challenge-2", "042917", stored)).toBe(false);
    expect(
      oneTimeCodeMatches(
        oneTimeCodeKey("another root secret, thirty-two chars long"),
        "challenge-1",
        "042917",
        stored,
      ),
    ).toBe(false);
    expect(oneTimeCodeMatches(key, "challenge-1", "042917", "00")).toBe(false);
  });

  it("never store the code itself", () => {
    expect(oneTimeCodeHmac(key, "challenge-1", "042917")).not.toContain("042917");
  });
});
