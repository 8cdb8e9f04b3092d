/**
 * The console's texts: one ICU MessageFormat catalogue per locale in ../messages (en, fa, fa-AF
 * for Dari, ps), English the reference, compiled and checked by @tjm/platform/catalogue as the
 * sign-in pages' and the e-mails' are. The server renders its views with them; a view's script
 * gets the messages of its own section (keys `<view>.…`) and `common.…` as JSON in the page and
 * formats them with the same IntlMessageFormat (page/i18n.js), so no text lives in a script.
 */
import { type Catalogue, compileCatalogues, FORMATS } from "@tjm/platform/catalogue";
import { formattingLocale, type Locale, pageLocale } from "@tjm/platform/locale";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import english from "../messages/en.json" with { type: "json" };
import persian from "../messages/fa.json" with { type: "json" };
import dari from "../messages/fa-AF.json" with { type: "json" };
import pashto from "../messages/ps.json" with { type: "json" };

export type ConsoleKey = keyof typeof english;
export type ConsoleCatalogue = Catalogue<ConsoleKey>;

export const CONSOLE_MESSAGE_FILES: Record<Locale, Record<string, string>> = {
  en: english,
  fa: persian,
  "fa-AF": dari,
  ps: pashto,
};

export const consoleCatalogues = compileCatalogues<ConsoleKey>("console", CONSOLE_MESSAGE_FILES);

/** The language the console's switch chose: a preference, not a secret, so readable and long-lived. */
export const LANGUAGE_COOKIE = "tjm_console_language";
const LANGUAGE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;

export function consoleCatalogue(locale: Locale): ConsoleCatalogue {
  return consoleCatalogues.get(locale) as ConsoleCatalogue;
}

/** What a page is rendered with: its catalogue, and its own path (where the language switch returns). */
export interface PageContext {
  catalogue: ConsoleCatalogue;
  path: string;
}

/**
 * The request's page context: the switch's cookie, then Accept-Language, then English. The
 * switch returns to the page's path with its query, but not to a sign-in step's: the callback's
 * code and state are spent, and links need not repeat them.
 */
export function pageContext(c: Context): PageContext {
  const locale = pageLocale(getCookie(c, LANGUAGE_COOKIE), c.req.header("accept-language"));
  const url = new URL(c.req.url);
  const query = url.pathname.startsWith("/auth/") ? "" : url.search;
  return { catalogue: consoleCatalogue(locale), path: `${url.pathname}${query}` };
}

export function writeLanguageCookie(c: Context, locale: Locale, secure: boolean): void {
  setCookie(c, LANGUAGE_COOKIE, locale, {
    secure,
    sameSite: "Lax",
    path: "/",
    maxAge: LANGUAGE_COOKIE_MAX_AGE_SECONDS,
  });
}

/**
 * What a view's script needs to speak the page's language: the locale Intl formats with
 * (Gregorian, Latin digits), the named formats, and the messages of `sections` as written.
 */
export function scriptMessages(catalogue: ConsoleCatalogue, sections: readonly string[]) {
  const prefixes = sections.map((section) => `${section}.`);
  return {
    locale: catalogue.locale,
    formattingLocale: formattingLocale(catalogue.locale),
    formats: FORMATS,
    messages: Object.fromEntries(
      Object.entries(catalogue.messages).filter(([key]) => prefixes.some((prefix) => key.startsWith(prefix))),
    ),
  };
}
