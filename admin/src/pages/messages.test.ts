import { readdirSync, readFileSync } from "node:fs";
import { argumentsOf, untranslatedKeys } from "@tjm/platform/catalogue";
import { LOCALES } from "@tjm/platform/locale";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { accountView } from "../page/account-view.ts";
import { clientsView, enrollmentView, jobsView, jobView, submitView, workersView } from "../page/views.ts";
import { homePage, noAccessPage, notFoundPage, type Offered } from "./layout.ts";
import { CONSOLE_MESSAGE_FILES, consoleCatalogue, LANGUAGE_COOKIE, pageContext } from "./messages.ts";

const english = CONSOLE_MESSAGE_FILES.en;

describe("the console catalogues", () => {
  it.each(LOCALES)("%s has every English key with the same ICU arguments", (locale) => {
    const messages = CONSOLE_MESSAGE_FILES[locale];
    expect(Object.keys(messages).sort()).toEqual(Object.keys(english).sort());
    for (const [key, message] of Object.entries(english)) {
      expect([key, argumentsOf(messages[key] as string)]).toEqual([key, argumentsOf(message)]);
    }
  });

  it.each(["fa", "fa-AF", "ps"] as const)("%s is a translation, not a copy of English", (locale) => {
    expect(untranslatedKeys(CONSOLE_MESSAGE_FILES, locale)).toEqual([]);
  });

  it("Dari is not a copy of Iranian Persian: it has its own words", () => {
    const worded = Object.keys(english).filter((key) => /\p{L}/u.test(english[key] as string));
    const same = worded.filter(
      (key) => CONSOLE_MESSAGE_FILES["fa-AF"][key] === CONSOLE_MESSAGE_FILES.fa[key],
    );
    expect(same.length).toBeLessThan(worded.length / 4);
  });

  it("writes no Persian or Arabic-Indic digit into a message: numbers are arguments, Latin by default", () => {
    for (const locale of LOCALES) {
      const digits = Object.entries(CONSOLE_MESSAGE_FILES[locale]).filter(([, message]) =>
        /[\u06f0-\u06f9\u0660-\u0669]/.test(message),
      );
      expect([locale, digits]).toEqual([locale, []]);
    }
  });
});

/** The view whose messages each script is sent (the page embeds `common.` and `<view>.`). */
const SCRIPT_SECTIONS: Record<string, string[]> = {
  "app.js": ["common"],
  "element-ids.js": [],
  "api.js": ["common"],
  "dom.js": ["common"],
  "live.js": ["common"],
  "i18n.js": ["common"],
  "pager.js": ["common"],
  "sections.js": ["common"],
  "jobs.js": ["common", "jobs"],
  "job-detail.js": ["common", "job"],
  "job-detail-parts.js": ["common", "job"],
  "submit.js": ["common", "submit"],
  "submit-outputs.js": ["common", "submit"],
  "submit-templates.js": ["common", "submit"],
  "workers.js": ["common", "workers"],
  "enrollment.js": ["common", "enrollment"],
  "account.js": ["common", "account"],
  "account-profile.js": ["common", "account"],
  "account-identifiers.js": ["common", "account"],
  "account-mfa.js": ["common", "account"],
  "account-sessions.js": ["common", "account"],
  "account-developer-apps.js": ["common", "account"],
  "clients.js": ["common", "clients"],
  "client-editor.js": ["common", "clients"],
};

/** Scripts that name no key: they format or place the texts they are given, or hold none. */
const KEYLESS_SCRIPTS = ["element-ids.js", "i18n.js", "pager.js", "sections.js"];

describe("the console's scripts", () => {
  it("every script of the page is listed above", () => {
    const scripts = readdirSync(new URL("../page/", import.meta.url)).filter((name) => name.endsWith(".js"));
    expect(scripts.sort()).toEqual(Object.keys(SCRIPT_SECTIONS).sort());
  });

  it.each(Object.entries(SCRIPT_SECTIONS))(
    "%s names only catalogue keys its page is sent",
    (file, sections) => {
      const source = readFileSync(new URL(`../page/${file}`, import.meta.url), "utf8");
      // Keys given to t(…) or to a view's failure report, and those a table names for t
      // (label, question, done).
      const keys = [
        ...source.matchAll(/(?:\bt\(\s*|\bfailureReporter\(\s*|\b(?:label|question|done): )"([^"]+)"/g),
      ].map((match) => match[1] as string);
      expect(keys.length > 0 || KEYLESS_SCRIPTS.includes(file)).toBe(true);
      for (const key of keys) {
        expect(Object.hasOwn(english, key), `${file}: ${key} is in the catalogue`).toBe(true);
        expect(sections, `${file}: ${key} is sent to its page`).toContain(key.split(".")[0]);
      }
    },
  );
});

const offered: Offered = { operations: true, clientAdministration: false };
const JOB_ID = "0b8a3f0e-6f1c-4a57-9a4e-2b1d6f3c9e10";

function scriptMessagesOf(html: string) {
  const json = /<script type="application\/json" id="console-messages">(.*?)<\/script>/s.exec(html)?.[1];
  return JSON.parse(json ?? "null") as {
    locale: string;
    formattingLocale: string;
    messages: Record<string, string>;
  };
}

describe("the console's pages in each locale", () => {
  it.each(LOCALES)("%s renders every view with lang, dir, the switch and its own texts", (locale) => {
    const context = { catalogue: consoleCatalogue(locale), path: "/jobs?state=RUNNING" };
    const direction = locale === "en" ? "ltr" : "rtl";
    const views = {
      jobs: jobsView(context, offered),
      job: jobView(context, offered, JOB_ID),
      submit: submitView(context, offered),
      workers: workersView(context, offered),
      enrollment: enrollmentView(context, offered),
      clients: clientsView(context, offered),
      account: accountView(context, offered, "account-<1>$&"),
    };
    for (const [view, html] of Object.entries(views)) {
      expect(html).toContain(`<html lang="${locale}" dir="${direction}">`);
      expect(html).toContain(`aria-label="${consoleCatalogue(locale).text("layout.language")}"`);
      expect(html).toContain(
        `href="/language?locale=${encodeURIComponent(locale)}&amp;returnTo=%2Fjobs%3Fstate%3DRUNNING" lang="${locale}" hreflang="${locale}" aria-current="true"`,
      );
      expect(html).toContain(`>${consoleCatalogue(locale).text("nav.workers")}</a>`);
      const sent = scriptMessagesOf(html);
      expect(sent.formattingLocale).toBe(`${locale}-u-ca-gregory-nu-latn`);
      const sections = new Set(Object.keys(sent.messages).map((key) => key.split(".")[0]));
      expect([...sections].sort()).toEqual(["common", view].sort());
      expect(sent.messages["common.liveLost"]).toBe(CONSOLE_MESSAGE_FILES[locale]["common.liveLost"]);
    }
    expect(views.account).toContain("<code>account-&lt;1&gt;$&amp;</code>");
    if (locale !== "en") {
      // No English text between tags: headings, labels, buttons and table headers are translated.
      for (const english of [
        "Jobs</h1>",
        ">Sign out<",
        ">Apply filters<",
        ">Priority<",
        ">Submit the job<",
      ]) {
        expect(Object.values(views).join("")).not.toContain(english);
      }
    }
  });

  it("sends no '<' that could close the messages' script element", () => {
    const html = noAccessPage({ catalogue: consoleCatalogue("ps"), path: "/" }, "</script><b>");
    expect(html).toContain("&lt;/script&gt;&lt;b&gt;");
    const jobs = jobsView({ catalogue: consoleCatalogue("fa"), path: "/" }, offered);
    expect(jobs.match(/<\/script>/g)?.length).toBe(2);
  });

  it.each(LOCALES)("%s says a console address names nothing in its own words", (locale) => {
    const html = notFoundPage({ catalogue: consoleCatalogue(locale), path: "/jobs/x" });
    expect(html).toContain(`<h1>${consoleCatalogue(locale).text("home.notFoundTitle")}</h1>`);
    expect(html).toContain(`<html lang="${locale}" dir="${locale === "en" ? "ltr" : "rtl"}">`);
  });

  it("renders the pages before sign-in in the chosen language", () => {
    const html = homePage({ catalogue: consoleCatalogue("fa-AF"), path: "/" });
    expect(html).toContain('<html lang="fa-AF" dir="rtl">');
    expect(html).toContain(consoleCatalogue("fa-AF").text("home.heading"));
  });
});

describe("the page's locale", () => {
  const app = new Hono().get("/", (c) => c.text(pageContext(c).catalogue.locale));
  const localeOf = async (headers: Record<string, string>) => (await app.request("/", { headers })).text();

  it("is the switch's cookie, then Accept-Language, then English", async () => {
    expect(await localeOf({ cookie: `${LANGUAGE_COOKIE}=ps`, "accept-language": "fa" })).toBe("ps");
    expect(await localeOf({ cookie: `${LANGUAGE_COOKIE}=prs` })).toBe("fa-AF");
    expect(await localeOf({ cookie: `${LANGUAGE_COOKIE}=xx`, "accept-language": "de, fa-IR;q=0.8" })).toBe(
      "fa",
    );
    expect(await localeOf({ "accept-language": "de" })).toBe("en");
  });

  it("returns the switch to the page's path and query, but not to a sign-in step's", async () => {
    const pathOf = new Hono().get("*", (c) => c.text(pageContext(c).path));
    expect(await (await pathOf.request("/jobs?state=FAILED")).text()).toBe("/jobs?state=FAILED");
    expect(await (await pathOf.request("/auth/callback?code=c&state=s")).text()).toBe("/auth/callback");
  });
});
