import { argumentsOf, untranslatedKeys } from "@tjm/platform/catalogue";
import { LOCALES, type Locale } from "@tjm/platform/locale";
import { describe, expect, it } from "vitest";
import { normalizeCode } from "./codes.ts";
import english from "./messages/en.json" with { type: "json" };
import persian from "./messages/fa.json" with { type: "json" };
import dari from "./messages/fa-AF.json" with { type: "json" };
import pashto from "./messages/ps.json" with { type: "json" };
import { messageCatalogues, renderEmail, renderSms } from "./templates.ts";

const files: Record<Locale, Record<string, string>> = { en: english, fa: persian, "fa-AF": dari, ps: pashto };

describe("the messages catalogues (e-mails and SMS)", () => {
  it.each(LOCALES)("%s has every English key with the same ICU arguments", (locale) => {
    expect(Object.keys(files[locale]).sort()).toEqual(Object.keys(english).sort());
    for (const [key, message] of Object.entries(english)) {
      expect([key, argumentsOf(files[locale][key] as string)]).toEqual([key, argumentsOf(message)]);
    }
  });

  it.each(["fa", "fa-AF", "ps"] as const)("%s is a translation, not a copy of English", (locale) => {
    expect(untranslatedKeys(files, locale)).toEqual([]);
  });

  it("Dari is not a copy of Iranian Persian: it has its own words", () => {
    const same = Object.keys(english).filter(
      (key) => (dari as Record<string, string>)[key] === (persian as Record<string, string>)[key],
    );
    expect(same.length).toBeLessThan(Object.keys(english).length / 4);
  });
});

describe("dates and codes in e-mails", () => {
  const when = new Date("2026-03-21T08:05:00Z");

  it.each([
    ["en", "March 21, 2026"],
    ["fa", "21 مارس 2026"],
    ["fa-AF", "21 مارچ 2026"],
    ["ps", "2026 مارچ 21"],
  ] as const)("%s writes a date in the Gregorian calendar with Latin digits", (locale, expected) => {
    const { text } = renderEmail({
      template: "password-changed",
      locale,
      params: { when: when.toISOString() },
      service: "TJM",
      reference: "r",
    });
    expect(text).toContain(expected);
    // Persian (۰-۹) and Arabic-Indic (٠-٩) digits, and the Persian calendar's 1405, never appear.
    expect(text).not.toMatch(/[\u06f0-\u06f9\u0660-\u0669]|1405/);
  });

  it.each(LOCALES)("%s renders each template as HTML with lang and dir, text, and an SMS", (locale) => {
    const input = { locale, service: "TJM", reference: "ref-1" };
    for (const [template, params] of [
      ["verification-code", { code: "482913", minutes: 10 }],
      ["recovery-code", { code: "482913", minutes: 1 }],
      ["mfa-code", { code: "482913", minutes: 5 }],
      ["password-changed", { when: when.toISOString() }],
      ["new-sign-in", { when: when.toISOString(), client: "Portal", address: "203.0.113.9" }],
    ] as const) {
      const email = renderEmail({ ...input, template, params });
      const direction = locale === "en" ? "ltr" : "rtl";
      expect(email.html).toContain(`<html lang="${locale}" dir="${direction}">`);
      expect(email.text).toContain("ref-1");
      if ("code" in params) {
        expect(email.html).toContain('<strong dir="ltr"');
        expect(email.text).toContain("482913");
        expect(renderSms({ ...input, template, params }).text).toContain("482913");
      }
    }
  });

  it("escapes what it is given in the HTML", () => {
    const email = renderEmail({
      template: "new-sign-in",
      locale: "en",
      params: { when: when.toISOString(), client: "<script>x</script>", address: "1.2.3.4" },
      service: "TJM",
      reference: "r",
    });
    expect(email.html).not.toContain("<script>");
    expect(email.html).toContain("&lt;script&gt;x&lt;/script&gt;");
  });

  it("has one catalogue per locale", () => {
    expect([...messageCatalogues.keys()]).toEqual([...LOCALES]);
  });
});

describe("normalizeCode", () => {
  it.each([
    ["123456", "123456"],
    ["۱۲۳۴۵۶", "123456"],
    ["١٢٣٤٥٦", "123456"],
    ["۱۲۳ ۴۵۶", "123456"],
    ["12-34-56", "123456"],
    ["\u200f۰۹۸۷\u200e", "0987"],
    ["12a456", "12a456"],
  ])("%j is %j", (typed, code) => {
    expect(normalizeCode(typed)).toBe(code);
  });
});
