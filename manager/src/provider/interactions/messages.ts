/**
 * The sign-in and logout pages' texts: one ICU MessageFormat catalogue per locale in messages/
 * (en, fa, fa-AF for Dari, ps), English the reference. Every other catalogue must have each
 * English key with the same arguments, so a page never shows a missing text or an argument
 * nobody fills (@tjm/platform/catalogue checks them).
 */
import { readFile } from "node:fs/promises";
import { CatalogueError, compileCatalogues, type Catalogue as IcuCatalogue } from "@tjm/platform/catalogue";
import {
  DEFAULT_LOCALE,
  DIRECTIONS,
  type Direction,
  LOCALES,
  type Locale,
  pageLocale,
} from "@tjm/platform/locale";
import { z } from "zod";
import type english from "./messages/en.json";

export type { Direction };
export { CatalogueError, DEFAULT_LOCALE };

export type MessageKey = keyof (typeof english)["messages"];

export type Catalogue = IcuCatalogue<MessageKey>;

const MESSAGES_DIRECTORY = new URL("./messages/", import.meta.url);

const catalogueFile = z.strictObject({
  locale: z.enum(LOCALES),
  direction: z.enum(["ltr", "rtl"]),
  messages: z.record(z.string(), z.string()),
});

/**
 * One catalogue over messages nobody checked against English (the page tests render a
 * right-to-left page from English texts with it); loadCatalogues checks every shipped one.
 */
export function catalogueFrom(file: {
  locale: Locale;
  direction: Direction;
  messages: Record<string, string>;
}): Catalogue {
  const reference = file.messages;
  const catalogue = compileCatalogues<MessageKey>("sign-in pages", {
    en: reference,
    fa: reference,
    "fa-AF": reference,
    ps: reference,
  }).get(file.locale) as Catalogue;
  return { ...catalogue, direction: file.direction };
}

/**
 * The catalogue of every locale from `<locale>.json` in the messages folder. A file that does
 * not parse, declares another locale or direction, lacks or adds a key, or changes a key's
 * arguments is an error naming the file and the key.
 */
export async function loadCatalogues(directory: URL = MESSAGES_DIRECTORY): Promise<Map<Locale, Catalogue>> {
  const files = {} as Record<Locale, Record<string, string>>;
  for (const locale of LOCALES) {
    const name = `${locale}.json`;
    let json: unknown;
    try {
      json = JSON.parse(await readFile(new URL(name, directory), "utf8"));
    } catch (err) {
      throw new CatalogueError(`message catalogue ${name} is missing or not JSON: ${(err as Error).message}`);
    }
    const parsed = catalogueFile.safeParse(json);
    if (!parsed.success) {
      throw new CatalogueError(`message catalogue ${name} is malformed: ${z.prettifyError(parsed.error)}`);
    }
    if (parsed.data.locale !== locale) {
      throw new CatalogueError(`message catalogue ${name} declares locale '${parsed.data.locale}'`);
    }
    if (parsed.data.direction !== DIRECTIONS[locale]) {
      throw new CatalogueError(`message catalogue ${name} declares direction '${parsed.data.direction}'`);
    }
    files[locale] = parsed.data.messages;
  }
  return compileCatalogues<MessageKey>("sign-in pages", files);
}

/** A page's catalogue: the page's language switch (`?locale=`), then Accept-Language (pageLocale). */
export function catalogueFor(
  catalogues: ReadonlyMap<string, Catalogue>,
  acceptLanguage: string | undefined,
  chosen?: string | undefined,
): Catalogue {
  const catalogue = catalogues.get(pageLocale(chosen, acceptLanguage)) ?? catalogues.get(DEFAULT_LOCALE);
  if (!catalogue) throw new Error(`no ${DEFAULT_LOCALE} message catalogue`);
  return catalogue;
}
