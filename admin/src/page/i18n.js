/**
 * The page's texts: the server puts the messages this view needs (ICU MessageFormat, in the
 * page's language) in <script id="console-messages" type="application/json">, and `t` formats
 * them with intl-messageformat, the library the server formats with, served as it is.
 * Dates and numbers use the locale the server named: Gregorian calendar, Latin digits.
 */
import { IntlMessageFormat } from "./intl-messageformat.js";

const { locale, formattingLocale, formats, messages } = JSON.parse(
  document.getElementById("console-messages")?.textContent ?? "{}",
);

export { formattingLocale, locale };

const compiled = new Map();

/** The message `key` with `values` put in; a key the page was not sent is a programming error. */
export function t(key, values = {}) {
  let format = compiled.get(key);
  if (format === undefined) {
    const message = messages?.[key];
    if (message === undefined) throw new Error(`the page was sent no message '${key}'`);
    format = new IntlMessageFormat(message, formattingLocale, formats, { ignoreTag: true });
    compiled.set(key, format);
  }
  return String(format.format(values));
}
