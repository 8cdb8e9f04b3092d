/**
 * Server-rendered pages: the sign-in flow's (plain HTML, no script) and the console's views
 * (the same frame with its navigation, the live-updates notice and the page's script). No
 * inline script or style anywhere: the CSP forbids both (the messages a view's script needs
 * travel in a JSON data block, which is not run). Every text comes from the console catalogue
 * of the page's locale; each page carries the language switch and its `lang` and `dir`.
 */
import { escapeHtml } from "@tjm/platform/html";
import { LANGUAGE_NAMES, LOCALES } from "@tjm/platform/locale";
import { ASSETS_PATH } from "../page/assets.ts";
import { ids } from "../page/element-ids.js";
import { type ConsoleCatalogue, type ConsoleKey, type PageContext, scriptMessages } from "./messages.ts";

export type { PageContext };
export { escapeHtml };

export const LANGUAGE_PATH = "/language";

/** A message as HTML: its text escaped, with `html` (already HTML) put in for its arguments. */
export function messageHtml(
  catalogue: ConsoleCatalogue,
  key: ConsoleKey,
  html: Record<string, string>,
): string {
  // Private-use marks stand for the arguments while the text is formatted and escaped.
  const marks = Object.keys(html).map((_, i) => `\u{E000}${i}\u{E001}`);
  const text = escapeHtml(
    catalogue.text(key, Object.fromEntries(Object.keys(html).map((name, i) => [name, marks[i] as string]))),
  );
  // A function, not a string, as the replacement: `$&` or `$'` in the HTML stays as it is.
  return Object.values(html).reduce(
    (result, value, i) => result.replace(marks[i] as string, () => value),
    text,
  );
}

/** A catalogue text, escaped for HTML. */
export function textHtml(
  catalogue: ConsoleCatalogue,
  key: ConsoleKey,
  values?: Record<string, string | number>,
): string {
  return escapeHtml(catalogue.text(key, values));
}

/** A view's texts as HTML: `const t = pageTexts(context); t("jobs.title")`. */
export function pageTexts({ catalogue }: PageContext) {
  return (key: ConsoleKey, values?: Record<string, string | number>) => textHtml(catalogue, key, values);
}

function head(catalogue: ConsoleCatalogue, title: string, script: boolean): string {
  return `<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${textHtml(catalogue, "layout.title", { title })}</title>
<link rel="icon" href="${ASSETS_PATH}/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS_PATH}/style.css">${
    script ? `\n<script type="module" src="${ASSETS_PATH}/app.js"></script>` : ""
  }</head>`;
}

/**
 * Links to this page in each language, each named in its own language and marked with its
 * `lang`: plain links to /language, which sets the cookie and comes back, so the switch works
 * without the script and before sign-in.
 */
function languageSwitch({ catalogue, path }: PageContext): string {
  const links = LOCALES.map((locale) => {
    const href = `${LANGUAGE_PATH}?locale=${encodeURIComponent(locale)}&returnTo=${encodeURIComponent(path)}`;
    const current = locale === catalogue.locale ? ' aria-current="true"' : "";
    return `<li><a href="${escapeHtml(href)}" lang="${locale}" hreflang="${locale}"${current}>${escapeHtml(LANGUAGE_NAMES[locale])}</a></li>`;
  });
  return `<nav class="languages" aria-label="${textHtml(catalogue, "layout.language")}"><ul>${links.join("")}</ul></nav>`;
}

function htmlOpening(catalogue: ConsoleCatalogue): string {
  return `<!doctype html>
<html lang="${catalogue.locale}" dir="${catalogue.direction}">`;
}

/** A whole page: `body` is HTML already escaped by the caller. */
export function page(context: PageContext, title: ConsoleKey, body: string): string {
  const { catalogue } = context;
  return `${htmlOpening(catalogue)}
${head(catalogue, catalogue.text(title), false)}
<body>
<header><p class="brand">${textHtml(catalogue, "layout.brand")}</p>${languageSwitch(context)}</header>
<main id="main">
${body}
</main>
</body>
</html>
`;
}

export type ViewName = "jobs" | "job" | "submit" | "workers" | "enrollment" | "clients" | "account";

/** What the signed-in account may use here: decided by the tokens its session holds. */
export interface Offered {
  /** An operations token: jobs, workers, enrollment tokens and the event stream. */
  operations: boolean;
  /** An admin-console token: the account holds the client-admin role. */
  clientAdministration: boolean;
}

const NAVIGATION: { view: ViewName; path: string; label: ConsoleKey; needs?: keyof Offered }[] = [
  { view: "jobs", path: "/jobs", label: "nav.jobs", needs: "operations" },
  { view: "submit", path: "/submit", label: "nav.submit", needs: "operations" },
  { view: "workers", path: "/workers", label: "nav.workers", needs: "operations" },
  { view: "enrollment", path: "/enrollment", label: "nav.enrollment", needs: "operations" },
  { view: "clients", path: "/clients", label: "nav.clients", needs: "clientAdministration" },
  { view: "account", path: "/account", label: "nav.account" },
];

/** JSON inside <script type="application/json">: nothing in it can close the element. */
function jsonBlock(value: unknown): string {
  return JSON.stringify(value).replaceAll("<", "\\u003c");
}

/**
 * A view of the signed-in console: `body` (already escaped) is its static part, which the
 * script fills; `data` becomes `data-*` attributes of <body> the script reads (e.g. the job id).
 * The navigation names only the views `offered` allows. The script gets the messages of the
 * view's section (`<view>.…` keys) and the common ones (`common.…`).
 */
export function consolePage(
  context: PageContext,
  view: ViewName,
  title: string,
  body: string,
  offered: Offered,
  data: Record<string, string> = {},
) {
  const { catalogue } = context;
  const links = NAVIGATION.filter((item) => item.needs === undefined || offered[item.needs])
    .map(
      (item) =>
        `<li><a href="${item.path}"${item.view === view ? ' aria-current="page"' : ""}>${textHtml(catalogue, item.label)}</a></li>`,
    )
    .join("");
  const attributes = Object.entries({ view, ...data })
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join("");
  return `${htmlOpening(catalogue)}
${head(catalogue, title, true)}
<body${attributes}>
<script type="application/json" id="${ids.consoleMessages}">${jsonBlock(scriptMessages(catalogue, ["common", view]))}</script>
<a class="skip-link" href="#main">${textHtml(catalogue, "layout.skip")}</a>
<header class="console-header">
<p class="brand">${textHtml(catalogue, "layout.brand")}</p>
<nav aria-label="${textHtml(catalogue, "layout.mainNavigation")}"><ul>${links}</ul></nav>
<button type="button" id="${ids.signOut}" class="secondary">${textHtml(catalogue, "layout.signOut")}</button>
${languageSwitch(context)}
</header>
<div id="${ids.liveNotice}" class="notice" role="status" aria-live="polite"></div>
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>
`;
}

const signInAgain = (catalogue: ConsoleCatalogue) =>
  `<p><a href="/auth/sign-in">${textHtml(catalogue, "signIn.again")}</a></p>`;

/** The provider refused the sign-in (the account cancelled it, or may use nothing here). */
export function noAccessPage(context: PageContext, description: string | undefined): string {
  const { catalogue } = context;
  return page(
    context,
    "signIn.noAccessTitle",
    `<h1>${textHtml(catalogue, "signIn.noAccessTitle")}</h1>
<p role="alert">${textHtml(catalogue, "signIn.noAccess")}</p>
${description ? `<p>${textHtml(catalogue, "signIn.providerSaid", { description })}</p>` : ""}
${signInAgain(catalogue)}`,
  );
}

export function signInFailedPage(context: PageContext): string {
  const { catalogue } = context;
  return page(
    context,
    "signIn.failedTitle",
    `<h1>${textHtml(catalogue, "signIn.failedTitle")}</h1>
<p role="alert">${textHtml(catalogue, "signIn.failed")}</p>
${signInAgain(catalogue)}`,
  );
}

export function signedOutPage(context: PageContext): string {
  const { catalogue } = context;
  return page(
    context,
    "signIn.signedOutTitle",
    `<h1>${textHtml(catalogue, "signIn.signedOutTitle")}</h1>${signInAgain(catalogue)}`,
  );
}

/** What `/` shows a browser without a session (a signed-in one goes to its first view). */
export function homePage(context: PageContext): string {
  const { catalogue } = context;
  return page(
    context,
    "home.title",
    `<h1>${textHtml(catalogue, "home.heading")}</h1><p>${textHtml(catalogue, "home.intro")}</p><p><a href="/auth/sign-in?returnTo=/">${textHtml(catalogue, "home.signIn")}</a></p>`,
  );
}

export function providerUnavailablePage(context: PageContext): string {
  const { catalogue } = context;
  return page(
    context,
    "signIn.unavailableTitle",
    `<h1>${textHtml(catalogue, "signIn.unavailableHeading")}</h1>
<p>${textHtml(catalogue, "signIn.unavailable")}</p>`,
  );
}

/** A console address that names nothing (a job id that is not one): said in the page's language. */
export function notFoundPage(context: PageContext): string {
  const { catalogue } = context;
  return page(
    context,
    "home.notFoundTitle",
    `<h1>${textHtml(catalogue, "home.notFoundTitle")}</h1><p>${textHtml(catalogue, "home.notFound")}</p><p><a href="/">${textHtml(catalogue, "home.start")}</a></p>`,
  );
}
