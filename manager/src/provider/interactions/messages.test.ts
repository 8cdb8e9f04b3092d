import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import english from "./messages/en.json" with { type: "json" };
import {
  type Catalogue,
  CatalogueError,
  catalogueFor,
  catalogueFrom,
  languageRanges,
  loadCatalogues,
} from "./messages.ts";

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A messages folder holding en.json and the given files. */
async function folderWith(files: Record<string, unknown>): Promise<URL> {
  const folder = await mkdtemp(join(tmpdir(), "tjm-messages-"));
  folders.push(folder);
  for (const [name, content] of Object.entries({ "en.json": english, ...files })) {
    await writeFile(join(folder, name), typeof content === "string" ? content : JSON.stringify(content));
  }
  return pathToFileURL(`${folder}/`);
}

const persian = (messages: Record<string, string>) => ({ locale: "fa", direction: "rtl", messages });

describe("loadCatalogues", () => {
  it("loads the shipped catalogues: English, left to right", async () => {
    const catalogues = await loadCatalogues();
    const en = catalogues.get("en");
    expect(en).toMatchObject({ locale: "en", direction: "ltr" });
    expect(en?.text("login.heading", { client: "Portal" })).toBe("Sign in to Portal");
    expect(en?.text("login.invalidCredentials")).toBe("The e-mail address or password is not correct.");
  });

  it("loads a complete right-to-left catalogue beside English", async () => {
    const catalogues = await loadCatalogues(await folderWith({ "fa.json": persian(english.messages) }));
    expect([...catalogues.keys()].sort()).toEqual(["en", "fa"]);
    expect(catalogues.get("fa")?.direction).toBe("rtl");
  });

  it.each([
    [
      "a missing key",
      (() => {
        const { "login.submit": _, ...rest } = english.messages;
        return persian(rest);
      })(),
      "message catalogue fa.json lacks 'login.submit'",
    ],
    [
      "a changed placeholder",
      persian({ ...english.messages, "login.heading": "ورود به {app}" }),
      "message catalogue fa.json: 'login.heading' has placeholders [app], en.json has [client]",
    ],
    [
      "a dropped placeholder",
      persian({ ...english.messages, "login.tooManyAttempts": "چند دقیقه دیگر" }),
      "message catalogue fa.json: 'login.tooManyAttempts' has placeholders [], en.json has [minutes]",
    ],
    [
      "a key English does not have",
      persian({ ...english.messages, "login.extra": "x" }),
      "message catalogue fa.json has 'login.extra', which en.json does not",
    ],
    [
      "a locale other than the file's name",
      { ...persian(english.messages), locale: "ps" },
      "declares locale 'ps'",
    ],
    ["an unknown direction", { ...persian(english.messages), direction: "ttb" }, "fa.json is malformed"],
    ["a file that is not JSON", "{ not json", "message catalogue fa.json is not JSON"],
  ])("refuses %s, naming the file and the key", async (_, file, message) => {
    const folder = await folderWith({ "fa.json": file });
    const loading = loadCatalogues(folder);
    await expect(loading).rejects.toThrow(CatalogueError);
    await expect(loading).rejects.toThrow(message);
  });
});

describe("text", () => {
  const en = catalogueFrom({ locale: "en", direction: "ltr", messages: english.messages });

  it("fills every placeholder, and refuses to leave one unfilled", () => {
    expect(en.text("login.tooManyAttempts", { minutes: "15" })).toBe(
      "Too many failed attempts. Try again in 15 minutes.",
    );
    expect(() => en.text("login.tooManyAttempts")).toThrow(
      "message 'login.tooManyAttempts' needs a value for {minutes}",
    );
  });

  it("inserts values as they are: escaping is the page's work", () => {
    expect(en.text("login.heading", { client: "<b>{x}</b>" })).toBe("Sign in to <b>{x}</b>");
  });
});

describe("catalogueFor", () => {
  const fake = (locale: string): Catalogue =>
    catalogueFrom({ locale, direction: "rtl", messages: english.messages });
  const catalogues = new Map<string, Catalogue>([
    ["en", catalogueFrom({ locale: "en", direction: "ltr", messages: english.messages })],
    ["fa", fake("fa")],
    ["ps", fake("ps")],
    ["pt-br", fake("pt-BR")],
  ]);
  const chosen = (header: string | undefined) => catalogueFor(catalogues, header).locale;

  it.each([
    [undefined, "en"],
    ["", "en"],
    ["fa", "fa"],
    ["fa-IR", "fa"],
    ["FA-ir", "fa"],
    ["de-DE, ps;q=0.8, en;q=0.5", "ps"],
    ["en;q=0.4, fa;q=0.9", "fa"],
    ["fa;q=0, ps;q=0.1", "ps"],
    ["pt-BR-x-whatever", "pt-BR"],
    ["pt", "en"],
    ["de, *;q=0.5", "en"],
    ["ps;q=2, fa;q=0.5", "fa"],
    ["fa;level=1, ps", "ps"],
    ["  ps  ;  q=0.7 , fa ; q=0.6", "ps"],
  ])("Accept-Language %j gives %s", (header, locale) => {
    expect(chosen(header)).toBe(locale);
  });

  it("keeps the header's order between equal weights", () => {
    expect(languageRanges("ps, fa, en;q=0.9").map((range) => range.tag)).toEqual(["ps", "fa", "en"]);
  });
});
