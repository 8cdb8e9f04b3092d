/**
 * The sign-in pages' texts, one JSON file per locale in messages/. English is the reference:
 * every other catalogue must have each of its keys with the same placeholders, so a page never
 * shows a missing text or a placeholder nobody fills.
 */
import { readdir, readFile } from "node:fs/promises";
import { z } from "zod";
import type english from "./messages/en.json";

export type MessageKey = keyof (typeof english)["messages"];

export type Direction = "ltr" | "rtl";

export interface Catalogue {
  locale: string;
  direction: Direction;
  /** The message with each `{name}` replaced by `values[name]`; plain text, not HTML. */
  text(key: MessageKey, values?: Record<string, string>): string;
}

export const DEFAULT_LOCALE = "en";

const MESSAGES_DIRECTORY = new URL("./messages/", import.meta.url);

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const catalogueFile = z.strictObject({
  // A BCP 47 tag as Accept-Language names it: "fa", "ps", "pt-BR".
  locale: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/),
  direction: z.enum(["ltr", "rtl"]),
  messages: z.record(z.string(), z.string()),
});

export class CatalogueError extends Error {}

function placeholdersOf(message: string): string[] {
  return [...new Set(Array.from(message.matchAll(PLACEHOLDER), (match) => match[1] as string))].sort();
}

/** A catalogue over already-checked messages; loadCatalogues builds each file's with it. */
export function catalogueFrom(file: {
  locale: string;
  direction: Direction;
  messages: Record<MessageKey, string>;
}): Catalogue {
  return {
    locale: file.locale,
    direction: file.direction,
    text(key, values = {}) {
      return file.messages[key].replace(PLACEHOLDER, (_, name: string) => {
        const value = values[name];
        if (value === undefined) throw new Error(`message '${key}' needs a value for {${name}}`);
        return value;
      });
    },
  };
}

/**
 * Every `*.json` in the messages folder, by lowercased locale. A file that does not parse, has a
 * locale other than its name, lacks or adds a key, or changes a key's placeholders is an error
 * naming the file and the key.
 */
export async function loadCatalogues(directory: URL = MESSAGES_DIRECTORY): Promise<Map<string, Catalogue>> {
  const names = (await readdir(directory)).filter((name) => name.endsWith(".json")).sort();
  const files = new Map<string, z.infer<typeof catalogueFile>>();
  for (const name of names) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(new URL(name, directory), "utf8"));
    } catch (err) {
      throw new CatalogueError(`message catalogue ${name} is not JSON: ${(err as Error).message}`);
    }
    const parsed = catalogueFile.safeParse(json);
    if (!parsed.success) {
      throw new CatalogueError(`message catalogue ${name} is malformed: ${z.prettifyError(parsed.error)}`);
    }
    if (`${parsed.data.locale}.json` !== name) {
      throw new CatalogueError(`message catalogue ${name} declares locale '${parsed.data.locale}'`);
    }
    files.set(name, parsed.data);
  }
  const reference = files.get(`${DEFAULT_LOCALE}.json`);
  if (!reference) throw new CatalogueError(`no ${DEFAULT_LOCALE}.json message catalogue`);

  const catalogues = new Map<string, Catalogue>();
  for (const [name, file] of files) {
    for (const [key, message] of Object.entries(reference.messages)) {
      const translated = file.messages[key];
      if (translated === undefined) throw new CatalogueError(`message catalogue ${name} lacks '${key}'`);
      const expected = placeholdersOf(message).join(", ");
      const found = placeholdersOf(translated).join(", ");
      if (found !== expected) {
        throw new CatalogueError(
          `message catalogue ${name}: '${key}' has placeholders [${found}], ${DEFAULT_LOCALE}.json has [${expected}]`,
        );
      }
    }
    for (const key of Object.keys(file.messages)) {
      if (!(key in reference.messages)) {
        throw new CatalogueError(
          `message catalogue ${name} has '${key}', which ${DEFAULT_LOCALE}.json does not`,
        );
      }
    }
    catalogues.set(
      file.locale.toLowerCase(),
      catalogueFrom({ ...file, messages: file.messages as Record<MessageKey, string> }),
    );
  }
  return catalogues;
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

/**
 * The catalogue for the most wanted language that has one. A range falls back by dropping
 * subtags from the end (RFC 4647 lookup: `fa-IR` finds `fa`); nothing found gives English.
 */
export function catalogueFor(
  catalogues: Map<string, Catalogue>,
  acceptLanguage: string | undefined,
): Catalogue {
  for (const { tag } of languageRanges(acceptLanguage ?? "")) {
    const subtags = tag.split("-");
    while (subtags.length > 0) {
      const catalogue = catalogues.get(subtags.join("-"));
      if (catalogue) return catalogue;
      subtags.pop();
    }
  }
  const fallback = catalogues.get(DEFAULT_LOCALE);
  if (!fallback) throw new Error(`no ${DEFAULT_LOCALE} message catalogue`);
  return fallback;
}
