import { describe, expect, it } from "vitest";
import { decodeUtf8, loneSurrogateDetails, MAX_SURROGATE_DETAILS } from "./json-text.ts";

const bytes = (...values: number[]) => new Uint8Array(values);

describe("decodeUtf8", () => {
  it("decodes UTF-8, dropping a leading BOM", () => {
    expect(decodeUtf8(new TextEncoder().encode('{"name":"علی‌رضا 🎬"}'))).toBe('{"name":"علی‌رضا 🎬"}');
    expect(decodeUtf8(bytes(0xef, 0xbb, 0xbf, 0x7b, 0x7d))).toBe("{}");
  });

  it.each([
    ["a lone continuation byte", bytes(0x80)],
    ["0xFF", bytes(0x22, 0xff, 0x22)],
    ["a sequence cut short", bytes(0xe2, 0x82)],
    ["an overlong /", bytes(0xc0, 0xaf)],
    ["an encoded surrogate", bytes(0xed, 0xa0, 0x80)],
    ["a code point past U+10FFFF", bytes(0xf4, 0x90, 0x80, 0x80)],
  ])("refuses %s", (_, input) => {
    expect(decodeUtf8(input)).toBeUndefined();
  });
});

describe("loneSurrogateDetails", () => {
  const paths = (text: string) => loneSurrogateDetails(text).map((detail) => detail.path);

  it("names every string holding one, value or key, in the body's order", () => {
    expect(paths('{"a":["ok","\\ud800x"],"b\\udc00":{"c":"\\uDBFF"},"d":"\\ud83c\\udfac"}')).toEqual([
      "a.1",
      "b\ufffd",
      "b\ufffd.c",
    ]);
    expect(paths('"\\ud800"')).toEqual(["body"]);
  });

  it("takes pairs, text without escapes, and text that does not parse", () => {
    expect(paths('{"name":"\\ud83c\\udfac \\uD83D\\uDE00"}')).toEqual([]);
    expect(paths('{"name":"\\\\ud800"}')).toEqual([]);
    expect(paths('{"name":"\\ud800"')).toEqual([]);
  });

  it("walks a body nested 10,000 deep without overflowing the stack", () => {
    expect(paths(`${"[".repeat(10_000)}"\\ud800"${"]".repeat(10_000)}`)).toEqual([
      Array.from({ length: 10_000 }, () => "0").join("."),
    ]);
  });

  it("stops after MAX_SURROGATE_DETAILS, saying there are more", () => {
    const details = loneSurrogateDetails(JSON.stringify(Array.from({ length: 200_000 }, () => "\ud800")));
    expect(details).toHaveLength(MAX_SURROGATE_DETAILS + 1);
    expect(details.at(-1)).toMatchObject({ path: "body", message: "holds more lone surrogates" });
  });
});
