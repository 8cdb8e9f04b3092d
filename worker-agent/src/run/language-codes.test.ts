import { describe, expect, it } from "vitest";
import { containerLanguage } from "./language-codes.ts";

describe("containerLanguage", () => {
  it.each([
    ["en", "eng"],
    ["fr", "fra"],
    ["de", "deu"],
    ["fa", "fas"],
    ["zh", "zho"],
    ["pt-BR", "por"],
    ["sr-Latn-RS", "srp"],
    ["fil", "fil"],
    ["yue-HK", "yue"],
    ["EN", "eng"],
    ["xx", "und"],
  ])("%s -> %s", (tag, code) => {
    expect(containerLanguage(tag)).toBe(code);
  });
});
