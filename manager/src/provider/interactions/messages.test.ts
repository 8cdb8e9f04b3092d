import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { argumentsOf, untranslatedKeys } from "@tjm/platform/catalogue";
import { LOCALES, type Locale } from "@tjm/platform/locale";
import { afterEach, describe, expect, it } from "vitest";
import english from "./messages/en.json" with { type: "json" };
import { CatalogueError, catalogueFor, loadCatalogues } from "./messages.ts";

const SHIPPED = new URL("./messages/", import.meta.url);

async function shippedFiles(): Promise<
  Record<Locale, { locale: string; direction: string; messages: Record<string, string> }>
> {
  const files = {} as Record<Locale, { locale: string; direction: string; messages: Record<string, string> }>;
  for (const locale of LOCALES)
    files[locale] = JSON.parse(await readFile(new URL(`${locale}.json`, SHIPPED), "utf8"));
  return files;
}

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A messages folder holding the shipped catalogues, with `fa.json` replaced. */
async function folderWithPersian(content: unknown): Promise<URL> {
  const folder = await mkdtemp(join(tmpdir(), "tjm-messages-"));
  folders.push(folder);
  for (const [locale, file] of Object.entries(await shippedFiles())) {
    const replaced = locale === "fa" ? content : file;
    await writeFile(
      join(folder, `${locale}.json`),
      typeof replaced === "string" ? replaced : JSON.stringify(replaced),
    );
  }
  return pathToFileURL(`${folder}/`);
}

const persian = (messages: Record<string, string>) => ({ locale: "fa", direction: "rtl", messages });

describe("the sign-in pages' catalogues", () => {
  it("load: English left to right; Persian, Dari and Pashto right to left", async () => {
    const catalogues = await loadCatalogues();
    expect([...catalogues.values()].map(({ locale, direction }) => [locale, direction])).toEqual([
      ["en", "ltr"],
      ["fa", "rtl"],
      ["fa-AF", "rtl"],
      ["ps", "rtl"],
    ]);
    expect(catalogues.get("en")?.text("login.heading", { client: "Portal" })).toBe("Sign in to Portal");
    expect(catalogues.get("fa")?.text("login.heading", { client: "Portal" })).toBe("ورود به Portal");
    expect(catalogues.get("ps")?.text("login.tooManyAttempts", { minutes: 15 })).toContain("15 دقیقې وروسته");
  });

  it.each(LOCALES)("%s has every English key with the same ICU arguments", async (locale) => {
    const files = await shippedFiles();
    const messages = files[locale].messages;
    expect(Object.keys(messages)).toEqual(Object.keys(english.messages));
    for (const [key, message] of Object.entries(english.messages)) {
      expect([key, argumentsOf(messages[key] as string)]).toEqual([key, argumentsOf(message)]);
    }
  });

  it.each(["fa", "fa-AF", "ps"] as const)("%s is a translation, not a copy of English", async (locale) => {
    const files = await shippedFiles();
    const flat = Object.fromEntries(LOCALES.map((l) => [l, files[l].messages])) as Record<
      Locale,
      Record<string, string>
    >;
    expect(untranslatedKeys(flat, locale)).toEqual([]);
  });

  it.each([
    [
      "a missing key",
      (() => {
        const { "login.submit": _, ...rest } = english.messages;
        return persian(rest);
      })(),
      "sign-in pages catalogue fa lacks 'login.submit'",
    ],
    [
      "a changed argument",
      persian({ ...english.messages, "login.heading": "ورود به {app}" }),
      "sign-in pages catalogue fa: 'login.heading' has arguments [app], en has [client]",
    ],
    [
      "a dropped plural",
      persian({ ...english.messages, "login.tooManyAttempts": "چند دقیقه دیگر" }),
      "'login.tooManyAttempts' has arguments [], en has [minutes]",
    ],
    [
      "a key English does not have",
      persian({ ...english.messages, "login.extra": "x" }),
      "sign-in pages catalogue fa has 'login.extra', which en does not",
    ],
    [
      "a locale other than the file's name",
      { ...persian(english.messages), locale: "ps" },
      "declares locale 'ps'",
    ],
    ["the wrong direction", { ...persian(english.messages), direction: "ltr" }, "declares direction 'ltr'"],
    ["a file that is not JSON", "{ not json", "message catalogue fa.json is missing or not JSON"],
  ])("refuses %s, naming the file and the key", async (_, file, message) => {
    const loading = loadCatalogues(await folderWithPersian(file));
    await expect(loading).rejects.toThrow(CatalogueError);
    await expect(loading).rejects.toThrow(message);
  });
});

describe("catalogueFor", () => {
  it.each([
    [undefined, undefined, "en"],
    ["", undefined, "en"],
    ["fa-IR", undefined, "fa"],
    ["prs", undefined, "fa-AF"],
    ["fa-AF, fa;q=0.9", undefined, "fa-AF"],
    ["de-DE, ps;q=0.8, en;q=0.5", undefined, "ps"],
    ["pt-BR", undefined, "en"],
    ["en", "fa", "fa"],
    ["fa", "ps", "ps"],
    ["ps", "klingon", "ps"],
  ])("Accept-Language %j with the page's switch at %j gives %s", async (header, chosen, locale) => {
    expect(catalogueFor(await loadCatalogues(), header, chosen).locale).toBe(locale);
  });
});
