/**
 * The page's texts: the server puts the messages this view needs (ICU MessageFormat, in the
 * page's language) in <script id="console-messages" type="application/json">, and `t` formats
 * them with intl-messageformat, the library the server formats with, served as it is.
 * Dates and numbers use the locale the server named: Gregorian calendar, Latin digits.
 */
import { ids } from "./element-ids.js";
import { IntlMessageFormat } from "./intl-messageformat.js";

/**
 * A key of the console's catalogue (English is the reference every locale has). The page is sent
 * only its view's section and the common one: `t` says so when a script asks for another.
 * @typedef {keyof typeof import("../messages/en.json")} MessageKey
 */

/** @typedef {Record<string, string | number | boolean | null | undefined>} MessageValues */

/**
 * @type {{
 *   locale: string,
 *   formattingLocale: string,
 *   formats: ConstructorParameters<typeof IntlMessageFormat>[2],
 *   messages: Partial<Record<MessageKey, string>>,
 * }}
 */
const { locale, formattingLocale, formats, messages } = JSON.parse(
  document.getElementById(ids.consoleMessages)?.textContent ?? "{}",
);

export { formattingLocale, locale };

/** @type {Map<MessageKey, IntlMessageFormat>} */
const compiled = new Map();

/**
 * The message `key` with `values` put in; a key the page was not sent is a programming error.
 * @param {MessageKey} key
 * @param {MessageValues} [values]
 * @returns {string}
 */
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
