import { describe, expect, it } from "vitest";
import { CatalogueError, compileCatalogues, untranslatedKeys } from "./catalogue.ts";
import { chooseLocale, localeFromAcceptLanguage, pageLocale, resolveLocale } from "./locale.ts";

describe("compileCatalogues", () => {
  const base = { greeting: "Hello {name}", count: "{n, plural, one {# file} other {# files}}" };
  const withFa = (fa: Record<string, string>) => ({ en: base, fa, "fa-AF": base, ps: base });

  it.each([
    ["a missing key", { greeting: "سلام {name}" }, "messages catalogue fa lacks 'count'"],
    [
      "a renamed argument",
      { ...base, greeting: "سلام {person}" },
      "'greeting' has arguments [person], en has [name]",
    ],
    ["a dropped plural", { ...base, count: "چند پرونده" }, "'count' has arguments [], en has [n]"],
    [
      "a key English does not have",
      { ...base, extra: "x" },
      "messages catalogue fa has 'extra', which en does not",
    ],
    ["a message that is not ICU", { ...base, greeting: "سلام {name" }, "'greeting' is not ICU MessageFormat"],
  ])("refuses %s, naming the locale and the key", (_, fa, message) => {
    expect(() => compileCatalogues("messages", withFa(fa))).toThrow(CatalogueError);
    expect(() => compileCatalogues("messages", withFa(fa))).toThrow(message);
  });

  it("finds an English copy, but not a message of arguments only", () => {
    const en = { a: "Sign in", b: "{error}: {description}", c: "{n, plural, one {# file} other {# files}}" };
    const copies = { en, fa: en, "fa-AF": en, ps: en };
    expect(untranslatedKeys(copies, "fa")).toEqual(["a", "c"]);
  });

  it("formats plurals by each locale's rules, with Latin digits", () => {
    const catalogues = compileCatalogues("messages", {
      en: base,
      fa: { ...base, count: "{n, plural, one {# پرونده} other {# پرونده}}" },
      "fa-AF": base,
      ps: { ...base, count: "{n, plural, one {# دوسیه} other {# دوسیې}}" },
    });
    expect(catalogues.get("en")?.text("count", { n: 1 })).toBe("1 file");
    expect(catalogues.get("fa")?.text("count", { n: 1234 })).toBe("1,234 پرونده");
    expect(catalogues.get("ps")?.text("count", { n: 2 })).toBe("2 دوسیې");
    expect(() => catalogues.get("en")?.text("greeting")).toThrow(
      "message 'greeting' needs a value for {name}",
    );
  });
});

describe("locales", () => {
  it.each([
    ["en-GB", "en"],
    ["fa", "fa"],
    ["fa-IR", "fa"],
    ["fa-AF", "fa-AF"],
    ["FA_af", "fa-AF"],
    ["prs", "fa-AF"],
    ["prs-AF", "fa-AF"],
    ["ps-PK", "ps"],
    ["de", undefined],
  ])("%s resolves to %s", (tag, locale) => {
    expect(resolveLocale(tag)).toBe(locale);
  });

  it.each([
    [{ acceptLanguage: "ps", bodyLocale: "fa", accountLocale: "fa-AF" }, "ps"],
    [{ acceptLanguage: "de-DE, fa;q=0.5", bodyLocale: "ps" }, "fa"],
    [{ acceptLanguage: "de-DE", bodyLocale: "prs", accountLocale: "ps" }, "fa-AF"],
    [{ acceptLanguage: undefined, bodyLocale: "klingon", accountLocale: "ps" }, "ps"],
    [{ acceptLanguage: "", bodyLocale: undefined, accountLocale: undefined }, "en"],
    [{ acceptLanguage: "fa;q=0, ps;q=0.1" }, "ps"],
    [{ acceptLanguage: "*", accountLocale: "fa" }, "fa"],
  ] as const)(
    "chooseLocale(%j) is %s: Accept-Language, then the body, then the account, then English",
    (sources, locale) => {
      expect(chooseLocale(sources)).toBe(locale);
    },
  );

  it("reads Accept-Language's weights, keeping the header's order between equal ones", () => {
    expect(localeFromAcceptLanguage("en;q=0.4, fa;q=0.9")).toBe("fa");
    expect(localeFromAcceptLanguage("ps, fa")).toBe("ps");
    expect(localeFromAcceptLanguage("ps;q=2, fa;q=0.5")).toBe("fa");
  });
});

describe("pageLocale", () => {
  it.each([
    ["ps", "fa, en", "ps"],
    ["prs", undefined, "fa-AF"],
    ["klingon", "fa-IR, en;q=0.5", "fa"],
    [undefined, "de", "en"],
  ] as const)("the switch's %s, then Accept-Language %s: %s", (chosen, acceptLanguage, locale) => {
    expect(pageLocale(chosen, acceptLanguage)).toBe(locale);
  });
});
