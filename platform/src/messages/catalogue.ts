/**
 * ICU MessageFormat catalogues, one per locale, English the reference: every other catalogue
 * has each English key with the same arguments, so no text is missing and no argument goes
 * unfilled. The sign-in pages, the messages TJM sends and the Admin console each have a set.
 */
import { IntlMessageFormat, type PrimitiveType } from "intl-messageformat";
import {
  DEFAULT_LOCALE,
  DIRECTIONS,
  type Direction,
  formattingLocale,
  LOCALES,
  type Locale,
} from "./locale.ts";

export class CatalogueError extends Error {}

/**
 * Named formats a message may use: `{when, date, moment}` is a date and time in UTC. A page's
 * script that formats messages itself (the Admin console's) is given these too.
 */
export const FORMATS = {
  date: { moment: { dateStyle: "long", timeStyle: "short", timeZone: "UTC" } },
  time: {},
  number: {},
} as const;

export interface Catalogue<Key extends string> {
  locale: Locale;
  direction: Direction;
  /** The message as plain text (not HTML: escaping is the renderer's work). */
  text(key: Key, values?: Record<string, PrimitiveType>): string;
  /** The messages as written (ICU source), for a page's script that formats them itself. */
  messages: Readonly<Record<Key, string>>;
}

// The parser's element types (intl-messageformat's TYPE): 1 argument … 8 tag.
const ARGUMENT_TYPES = new Set([1, 2, 3, 4, 5, 6]);
const OPTION_TYPES = new Set([5, 6]);
const TAG_TYPE = 8;

interface Element {
  type: number;
  value?: unknown;
  options?: Record<string, { value: Element[] }>;
  children?: Element[];
}

/** The arguments a message names, each once, sorted: `{name}`, `{n, plural, …}` and those inside. */
export function argumentsOf(message: string, locale: string = DEFAULT_LOCALE): string[] {
  const names = new Set<string>();
  const walk = (elements: Element[]) => {
    for (const element of elements) {
      if (ARGUMENT_TYPES.has(element.type)) names.add(String(element.value));
      if (OPTION_TYPES.has(element.type)) {
        for (const option of Object.values(element.options ?? {})) walk(option.value);
      }
      if (element.type === TAG_TYPE) walk(element.children ?? []);
    }
  };
  walk(new IntlMessageFormat(message, locale).getAst() as Element[]);
  return [...names].sort();
}

/** The words of a message: its literal text, options of plurals and selects included. */
function literalTextOf(message: string): string {
  let text = "";
  const walk = (elements: Element[]) => {
    for (const element of elements) {
      if (element.type === 0) text += String(element.value);
      if (OPTION_TYPES.has(element.type)) {
        for (const option of Object.values(element.options ?? {})) walk(option.value);
      }
      if (element.type === TAG_TYPE) walk(element.children ?? []);
    }
  };
  walk(new IntlMessageFormat(message, DEFAULT_LOCALE).getAst() as Element[]);
  return text;
}

/**
 * The keys of `locale` whose message is English's own word for word although it has words to
 * translate (a message of arguments and punctuation only, `{error}: {description}`, may be).
 */
export function untranslatedKeys(files: Record<Locale, Record<string, string>>, locale: Locale): string[] {
  return Object.entries(files[DEFAULT_LOCALE]).flatMap(([key, english]) =>
    files[locale][key] === english && /\p{L}/u.test(literalTextOf(english)) ? [key] : [],
  );
}

function compile(locale: Locale, key: string, message: string): IntlMessageFormat {
  try {
    return new IntlMessageFormat(message, formattingLocale(locale), FORMATS, { ignoreTag: true });
  } catch (err) {
    throw new CatalogueError(
      `catalogue ${locale}: '${key}' is not ICU MessageFormat: ${(err as Error).message}`,
    );
  }
}

/**
 * One catalogue per locale from its messages, checked against English: a key missing or
 * added, an argument changed, or a message that does not parse is an error naming the locale
 * and the key. `name` says which set in the error (`sign-in pages`, `messages`).
 */
export function compileCatalogues<Key extends string>(
  name: string,
  files: Record<Locale, Record<string, string>>,
): Map<Locale, Catalogue<Key>> {
  const reference = files[DEFAULT_LOCALE];
  const catalogues = new Map<Locale, Catalogue<Key>>();
  for (const locale of LOCALES) {
    const messages = files[locale];
    const compiled = new Map<string, { format: IntlMessageFormat; required: string[] }>();
    for (const [key, english] of Object.entries(reference)) {
      const message = messages[key];
      if (message === undefined) throw new CatalogueError(`${name} catalogue ${locale} lacks '${key}'`);
      const format = compile(locale, key, message);
      const expected = argumentsOf(english).join(", ");
      const found = argumentsOf(message).join(", ");
      if (found !== expected) {
        throw new CatalogueError(
          `${name} catalogue ${locale}: '${key}' has arguments [${found}], ${DEFAULT_LOCALE} has [${expected}]`,
        );
      }
      compiled.set(key, { format, required: argumentsOf(english) });
    }
    for (const key of Object.keys(messages)) {
      if (!Object.hasOwn(reference, key)) {
        throw new CatalogueError(
          `${name} catalogue ${locale} has '${key}', which ${DEFAULT_LOCALE} does not`,
        );
      }
    }
    catalogues.set(locale, {
      locale,
      direction: DIRECTIONS[locale],
      messages: messages as Record<Key, string>,
      text(key, values = {}) {
        const message = compiled.get(key);
        if (!message) throw new Error(`${name} catalogue has no message '${key}'`);
        for (const argument of message.required) {
          if (values[argument] === undefined)
            throw new Error(`message '${key}' needs a value for {${argument}}`);
        }
        return String(message.format.format(values));
      },
    });
  }
  return catalogues;
}
