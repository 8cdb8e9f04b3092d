import { describe, expect, it } from "vitest";
import { hasSignatureOf } from "./avatar-image.ts";
import { checkProfileChange } from "./profile-rules.ts";

const TODAY = "2026-11-27";

describe("checkProfileChange", () => {
  it("normalises a name to NFC, trimmed, keeping the zero-width non-joiner", () => {
    expect(checkProfileChange({ name: "  می\u200cخواهم e\u0301 " }, null, TODAY)).toEqual({
      change: { displayName: "می\u200cخواهم \u00e9" },
      problems: [],
    });
  });

  it("refuses a name that shows nothing or carries a bidirectional override", () => {
    const codes = (name: string) => checkProfileChange({ name }, null, TODAY).problems.map((p) => p.code);
    expect(codes(" \u200b\u200c ")).toEqual(["name.invisible"]);
    expect(codes("Ali\u202eevil")).toEqual(["name.bidi_override"]);
    expect(codes("علی\u200dرضا")).toEqual([]);
  });

  it("counts characters as code points: 100 emoji pass, 101 do not", () => {
    expect(checkProfileChange({ name: "😀".repeat(100) }, null, TODAY).problems).toEqual([]);
    expect(checkProfileChange({ name: "😀".repeat(101) }, null, TODAY).problems).toEqual([
      expect.objectContaining({ path: "name", code: "validation.too_big" }),
    ]);
  });

  it.each([
    ["2026-11-27", []],
    ["1900-01-01", []],
    ["2024-02-29", []],
    ["2026-11-28", ["validation.too_big"]],
    ["1899-12-31", ["validation.too_small"]],
    ["2023-02-29", ["validation.custom"]],
    ["1990-3-21", ["validation.custom"]],
  ])("takes a date of birth %s with %j", (dateOfBirth, codes) => {
    expect(checkProfileChange({ dateOfBirth }, null, TODAY).problems.map((p) => p.code)).toEqual(codes);
  });

  it("keeps a description only beside self-described, stored or given", () => {
    expect(checkProfileChange({ genderDescription: "agender" }, "self-described", TODAY)).toEqual({
      change: { genderDescription: "agender" },
      problems: [],
    });
    expect(checkProfileChange({ gender: "male" }, "self-described", TODAY).change).toEqual({
      gender: "male",
      genderDescription: null,
    });
    expect(checkProfileChange({ genderDescription: null }, "self-described", TODAY).problems).toHaveLength(1);
    expect(checkProfileChange({ gender: "self-described" }, "self-described", TODAY).problems).toEqual([]);
  });

  it("takes the catalogue's locales and prs as fa-AF", () => {
    expect(checkProfileChange({ locale: "prs" }, null, TODAY).change).toEqual({ locale: "fa-AF" });
    expect(checkProfileChange({ locale: "fa-IR" }, null, TODAY).problems).toHaveLength(1);
    expect(checkProfileChange({ locale: null }, null, TODAY).change).toEqual({ locale: null });
  });

  it("lists every problem at once", () => {
    const { problems } = checkProfileChange({ name: "", gender: "x", locale: "de" }, null, TODAY);
    expect(problems.map((p) => p.path)).toEqual(["name", "gender", "locale"]);
  });
});

describe("hasSignatureOf", () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]);
  const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0]);
  const webp = new TextEncoder().encode("RIFF\u0000\u0000\u0000\u0000WEBPVP8 ");
  it("matches each type's signature and no other", () => {
    expect([hasSignatureOf(png, "image/png"), hasSignatureOf(png, "image/jpeg")]).toEqual([true, false]);
    expect([hasSignatureOf(jpeg, "image/jpeg"), hasSignatureOf(jpeg, "image/webp")]).toEqual([true, false]);
    expect([hasSignatureOf(webp, "image/webp"), hasSignatureOf(webp, "image/png")]).toEqual([true, false]);
    expect(hasSignatureOf(new Uint8Array(), "image/png")).toBe(false);
  });
});
