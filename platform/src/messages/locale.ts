/**
 * The locales TJM speaks to people in, and the one rule that picks one for a request. Pure: no
 * I/O, so the pages, the API routes and the message sender all choose alike.
 */

/** English, Persian (Iran), Dari (Persian of Afghanistan, `prs` in ISO 639-3) and Pashto. */
export const LOCALES = ["en", "fa", "fa-AF", "ps"] as const;
export type Locale = (typeof LOCALES)[number];

export const DEFAULT_LOCALE: Locale = "en";

export type Direction = "ltr" | "rtl";

export const DIRECTIONS: Record<Locale, Direction> = { en: "ltr", fa: "rtl", "fa-AF": "rtl", ps: "rtl" };

/** What people call each language in itself: the language switch shows these. */
export const LANGUAGE_NAMES: Record<Locale, string> = {
  en: "English",
  fa: "فارسی",
  "fa-AF": "دری",
  ps: "پښتو",
};

/**
 * The locale a BCP 47 tag names, or undefined. `prs` (Dari) is `fa-AF`; any other region of a
 * language falls back to the language (`fa-IR` is `fa`, `ps-PK` is `ps`, `en-GB` is `en`).
 */
export function resolveLocale(tag: string): Locale | undefined {
  const subtags = tag.trim().toLowerCase().split(/[-_]/);
  const [language, ...rest] = subtags;
  if (language === "prs") return "fa-AF";
  if (language === "fa") return rest.some((subtag) => subtag === "af") ? "fa-AF" : "fa";
  if (language === "ps") return "ps";
  if (language === "en") return "en";
  return undefined;
}

interface LanguageRange {
  tag: string;
  quality: number;
}

/** Accept-Language's ranges, most wanted first (RFC 9110 §12.5.4); malformed ones are skipped. */
export function languageRanges(acceptLanguage: string): LanguageRange[] {
  const ranges: LanguageRange[] = [];
  for (const part of acceptLanguage.split(",")) {
    const [range = "", ...parameters] = part.split(";").map((piece) => piece.trim());
    if (!/^([A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*|\*)$/.test(range)) continue;
    let quality = 1;
    for (const parameter of parameters) {
      const weight = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i.exec(parameter);
      if (!weight) {
        quality = Number.NaN;
        break;
      }
      quality = Number(weight[1]);
    }
    if (quality > 0) ranges.push({ tag: range.toLowerCase(), quality });
  }
  // Array.prototype.sort is stable: equal weights keep the header's order.
  return ranges.sort((a, b) => b.quality - a.quality);
}

/** The most wanted locale of an Accept-Language header that TJM speaks, or undefined. */
export function localeFromAcceptLanguage(acceptLanguage: string | undefined): Locale | undefined {
  for (const { tag } of languageRanges(acceptLanguage ?? "")) {
    const locale = resolveLocale(tag);
    if (locale) return locale;
  }
  return undefined;
}

export interface LocaleSources {
  /** The request's Accept-Language header. */
  acceptLanguage?: string | undefined;
  /** A `locale` field of the request body (the recovery routes take one). */
  bodyLocale?: string | undefined;
  /** The locale stored with the account the message is for. */
  accountLocale?: string | undefined;
}

/**
 * The locale of a message or a response: the request's Accept-Language wins over the body's
 * `locale` (the spec), then the account's stored locale, then English. A source naming no
 * locale TJM speaks is passed over, not an error.
 */
export function chooseLocale(sources: LocaleSources): Locale {
  return (
    localeFromAcceptLanguage(sources.acceptLanguage) ??
    (sources.bodyLocale === undefined ? undefined : resolveLocale(sources.bodyLocale)) ??
    (sources.accountLocale === undefined ? undefined : resolveLocale(sources.accountLocale)) ??
    DEFAULT_LOCALE
  );
}

/**
 * A page's locale: the language the person chose with the page's language switch, else the
 * most wanted of Accept-Language that TJM speaks, else English. The switch wins because it is
 * the person's own choice on the page; an API request's locale is chosen by chooseLocale.
 */
export function pageLocale(chosen: string | undefined, acceptLanguage: string | undefined): Locale {
  return (
    (chosen === undefined ? undefined : resolveLocale(chosen)) ??
    localeFromAcceptLanguage(acceptLanguage) ??
    DEFAULT_LOCALE
  );
}

/**
 * The locale Intl formats with: Gregorian calendar and Latin digits. Node's fa, fa-AF and ps
 * default to the Persian calendar and Persian digits, which make a date or a code ambiguous
 * to anyone comparing it with another screen.
 */
export function formattingLocale(locale: Locale): string {
  return `${locale}-u-ca-gregory-nu-latn`;
}
