/**
 * The provider's pages as complete HTML documents: data in, a string out, nothing else. No
 * script and no external asset: one inline style (PAGE_STYLE, a constant so a CSP hash of it
 * can be computed once). Every value from outside goes through escapeHtml; catalogue texts are
 * plain text and are escaped too.
 */
import { escapeHtml } from "@tjm/platform/html";
import { LANGUAGE_NAMES, LOCALES } from "@tjm/platform/locale";
import { inlineHash, type PageSources } from "@tjm/platform/page-headers";
import type { ResourceName } from "../../identity/resources.ts";
import type { Catalogue, MessageKey } from "./messages.ts";

export { escapeHtml };

export type LoginProblem = "invalid-credentials" | "too-many-attempts";

/**
 * Colours measured against white: text #1f2328 (15.8:1), muted #4b5563 (7.6:1), accent
 * #1d4ed8 (6.7:1, also the focus ring: ≥3:1 against the page and the buttons' edge), error
 * #a4161a on #fdecec (6.8:1), input borders #6b7280 (4.8:1). Logical properties only, so an rtl page is mirrored.
 */
export const PAGE_STYLE = `
*,*::before,*::after{box-sizing:border-box}
html{color:#1f2328;background:#fff;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans Arabic",sans-serif;font-size:100%;line-height:1.5}
html[dir="rtl"]{font-family:"Noto Naskh Arabic","Noto Sans Arabic",Vazirmatn,Tahoma,sans-serif;line-height:1.7}
.languages ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
.languages{max-inline-size:28rem;margin-inline:auto;padding-block:1rem 2rem;padding-inline:1rem;border-block-start:1px solid #d0d7de}
.languages a[aria-current]{color:#1f2328;font-weight:600;text-decoration:none}
body{margin:0}
main{max-inline-size:28rem;margin-inline:auto;padding-block:2.5rem;padding-inline:1rem}
h1{font-size:1.5rem;line-height:1.25;margin-block:0 1rem;overflow-wrap:anywhere}
p,ul{margin-block:0 1rem}
ul{padding-inline-start:1.25rem}
li{margin-block-end:.25rem}
.context{color:#4b5563;overflow-wrap:anywhere}
.skip-link{position:absolute;inset-inline-start:.5rem;inset-block-start:-4rem;padding-block:.5rem;padding-inline:1rem;background:#fff;color:#1d4ed8;border:2px solid #1d4ed8;border-radius:.25rem;z-index:1}
.skip-link:focus{inset-block-start:.5rem}
.problem{padding-block:.75rem;padding-inline:1rem;margin-block-end:1rem;border-inline-start:.25rem solid #a4161a;background:#fdecec;color:#a4161a;font-weight:600}
.field{margin-block-end:1rem}
label{display:block;font-weight:600;margin-block-end:.25rem}
.required{font-weight:400;color:#4b5563}
input{display:block;inline-size:100%;padding-block:.625rem;padding-inline:.75rem;font:inherit;color:inherit;background:#fff;border:1px solid #6b7280;border-radius:.25rem}
input[aria-invalid="true"]{border-color:#a4161a}
input[type="radio"],input[type="checkbox"]{display:inline-block;inline-size:auto;margin-inline-end:.5rem;vertical-align:middle}
fieldset{border:0;margin-inline:0;padding:0}
legend{font-weight:600;margin-block-end:.25rem;padding:0}
fieldset label{font-weight:400}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-block-start:1.5rem}
button{flex:1 1 10rem;min-block-size:2.75rem;padding-block:.625rem;padding-inline:1rem;font:inherit;font-weight:600;border-radius:.25rem;border:2px solid #1d4ed8;cursor:pointer}
.primary{background:#1d4ed8;color:#fff}
.secondary{background:#fff;color:#1d4ed8}
a{color:#1d4ed8}
:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
`;

/** What every page here loads: its one inline style, nothing else (platform/page-headers.ts). */
export const PAGE_SOURCES: PageSources = { style: [inlineHash(PAGE_STYLE)] };

/**
 * Links to the same page in each language (`?locale=`), each named in its own language and
 * marked with its `lang`; the current one is aria-current. Links, not a form with a script:
 * the pages' CSP allows no script. After <main>, so the keyboard reaches the form first.
 */
function languageSwitch(catalogue: Catalogue, pageHref: string): string {
  const links = LOCALES.map((locale) => {
    const current = locale === catalogue.locale ? ` aria-current="true"` : "";
    const href = `${pageHref}?locale=${encodeURIComponent(locale)}`;
    return `<li><a href="${escapeHtml(href)}" lang="${locale}" hreflang="${locale}"${current}>${escapeHtml(LANGUAGE_NAMES[locale])}</a></li>`;
  });
  return `<nav class="languages" aria-label="${escapeHtml(catalogue.text("language.label"))}"><ul>${links.join("")}</ul></nav>
`;
}

/**
 * Where a form posts, keeping the page's language: the answer (a failed sign-in shown again)
 * is in the language the person chose on the page, whatever their browser asks for.
 */
export function withLocale(catalogue: Catalogue, action: string): string {
  return `${action}${action.includes("?") ? "&" : "?"}locale=${encodeURIComponent(catalogue.locale)}`;
}

/** The interaction's page for a form action `<page>/<step>` (login, consent): where the switch leads. */
const interactionPageOf = (action: string) => action.slice(0, action.lastIndexOf("/"));

export function htmlDocument(catalogue: Catalogue, title: string, body: string, switchHref?: string): string {
  return `<!doctype html>
<html lang="${escapeHtml(catalogue.locale)}" dir="${catalogue.direction}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<a class="skip-link" href="#main">${escapeHtml(catalogue.text("page.skipToContent"))}</a>
<main id="main">
${body}
</main>
${switchHref === undefined ? "" : languageSwitch(catalogue, switchHref)}</body>
</html>
`;
}

export interface LoginPageData {
  catalogue: Catalogue;
  action: string;
  clientName: string;
  /** What the person typed last time, so a failure does not make them type it again. */
  email?: string;
  problem?: LoginProblem;
  /** With too-many-attempts: rounded up by the caller; at least 1 is shown. */
  retryAfterMinutes?: number;
  /** The "Forgot password?" link: the interaction's recovery page. */
  recoveryHref?: string;
}

function problemText(catalogue: Catalogue, problem: LoginProblem, retryAfterMinutes: number | undefined) {
  if (problem === "invalid-credentials") return catalogue.text("login.invalidCredentials");
  return catalogue.text("login.tooManyAttempts", { minutes: Math.max(1, Math.ceil(retryAfterMinutes ?? 1)) });
}

/**
 * The sign-in form. The failure text is one for an unknown account, a wrong password and a
 * disabled account alike; it is announced (role="alert") and described on both fields.
 */
export function loginPage(p: LoginPageData): string {
  const { catalogue } = p;
  const client = { client: p.clientName };
  const required = `<span class="required">${escapeHtml(catalogue.text("form.required"))}</span>`;
  const problem = p.problem
    ? `<p id="problem" class="problem" role="alert">${escapeHtml(problemText(catalogue, p.problem, p.retryAfterMinutes))}</p>`
    : "";
  const described = p.problem ? ` aria-describedby="problem"` : "";
  const invalid = p.problem === "invalid-credentials" ? ` aria-invalid="true"` : "";
  return htmlDocument(
    catalogue,
    catalogue.text("login.title", client),
    `<h1>${escapeHtml(catalogue.text("login.heading", client))}</h1>
<p class="context">${escapeHtml(catalogue.text("login.context", client))}</p>
${problem}
<form method="post" action="${escapeHtml(withLocale(catalogue, p.action))}">
<div class="field">
<label for="email">${escapeHtml(catalogue.text("login.emailLabel"))} ${required}</label>
<input id="email" name="email" type="email" dir="auto" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${escapeHtml(p.email ?? "")}"${described}${invalid}>
</div>
<div class="field">
<label for="password">${escapeHtml(catalogue.text("login.passwordLabel"))} ${required}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described}${invalid}>
</div>
<div class="actions">
<button type="submit" class="primary">${escapeHtml(catalogue.text("login.submit"))}</button>
</div>
</form>${
      p.recoveryHref === undefined
        ? ""
        : `\n<p><a href="${escapeHtml(withLocale(catalogue, p.recoveryHref))}">${escapeHtml(catalogue.text("login.forgotPassword"))}</a></p>`
    }`,
    interactionPageOf(p.action),
  );
}

export interface ConsentPageData {
  catalogue: Catalogue;
  action: string;
  /** Where the deny button posts (its formaction); a client without it posts deny to `action`. */
  abortAction: string;
  clientName: string;
  scopes: string[];
  resources: ResourceName[];
}

const SCOPE_MESSAGES: Record<string, MessageKey> = {
  openid: "consent.scope.openid",
  email: "consent.scope.email",
  profile: "consent.scope.profile",
  offline_access: "consent.scope.offline_access",
};

const RESOURCE_MESSAGES: Record<ResourceName, MessageKey> = {
  operations: "consent.resource.operations",
  "account-portal": "consent.resource.account-portal",
  "admin-console": "consent.resource.admin-console",
  tenant: "consent.resource.tenant",
};

/** What the client asks for, each resource and scope once; a scope TJM has no text for is named. */
export function consentPage(p: ConsentPageData): string {
  const { catalogue } = p;
  const client = { client: p.clientName };
  const items = [
    ...[...new Set(p.resources)].map((resource) => escapeHtml(catalogue.text(RESOURCE_MESSAGES[resource]))),
    ...[...new Set(p.scopes)].map((scope) => {
      const key = Object.hasOwn(SCOPE_MESSAGES, scope) ? SCOPE_MESSAGES[scope] : undefined;
      return escapeHtml(key ? catalogue.text(key) : catalogue.text("consent.otherScope", { scope }));
    }),
  ];
  const list = items.length > 0 ? `<ul>\n${items.map((item) => `<li>${item}</li>`).join("\n")}\n</ul>` : "";
  return htmlDocument(
    catalogue,
    catalogue.text("consent.title", client),
    `<h1>${escapeHtml(catalogue.text("consent.heading", client))}</h1>
<p>${escapeHtml(catalogue.text("consent.intro", client))}</p>
${list}
<form method="post" action="${escapeHtml(withLocale(catalogue, p.action))}">
<div class="actions">
<button type="submit" class="primary" name="decision" value="allow">${escapeHtml(catalogue.text("consent.allow"))}</button>
<button type="submit" class="secondary" name="decision" value="deny" formaction="${escapeHtml(withLocale(catalogue, p.abortAction))}">${escapeHtml(catalogue.text("consent.deny"))}</button>
</div>
</form>`,
    interactionPageOf(p.action),
  );
}

export interface ErrorPageData {
  catalogue: Catalogue;
  /** The OAuth error code, e.g. invalid_request. */
  error: string;
  description?: string;
  /** Where "Go back" leads; without it the page says to start again from the application. */
  backHref?: string;
}

export function errorPage(p: ErrorPageData): string {
  const { catalogue } = p;
  const body = p.description
    ? catalogue.text("error.body", { error: p.error, description: p.description })
    : p.error;
  const next = p.backHref
    ? `<p><a href="${escapeHtml(p.backHref)}">${escapeHtml(catalogue.text("error.back"))}</a></p>`
    : `<p>${escapeHtml(catalogue.text("error.startAgain"))}</p>`;
  return htmlDocument(
    catalogue,
    catalogue.text("error.title"),
    `<h1>${escapeHtml(catalogue.text("error.heading"))}</h1>
<p>${escapeHtml(body)}</p>
${next}`,
  );
}

export interface LogoutConfirmPageData {
  catalogue: Catalogue;
  issuer: string;
  /** oidc-provider's hidden form (its xsrf field): inserted verbatim, it is the provider's HTML. */
  formHtml: string;
  /** The id of that form, which the buttons submit through their form attribute. */
  formId: string;
}

/** Yes submits the provider's form with logout=yes; No submits it without, which keeps the session. */
export function logoutConfirmPage(p: LogoutConfirmPageData): string {
  const { catalogue } = p;
  const issuer = { issuer: p.issuer };
  const form = escapeHtml(p.formId);
  return htmlDocument(
    catalogue,
    catalogue.text("logout.title", issuer),
    `<h1>${escapeHtml(catalogue.text("logout.heading", issuer))}</h1>
${p.formHtml}
<div class="actions">
<button type="submit" class="primary" form="${form}" name="logout" value="yes" autofocus>${escapeHtml(catalogue.text("logout.yes"))}</button>
<button type="submit" class="secondary" form="${form}">${escapeHtml(catalogue.text("logout.no"))}</button>
</div>`,
  );
}

export interface LoggedOutPageData {
  catalogue: Catalogue;
  clientName?: string;
}

export function loggedOutPage(p: LoggedOutPageData): string {
  const { catalogue } = p;
  const from = p.clientName
    ? `<p>${escapeHtml(catalogue.text("loggedOut.fromClient", { client: p.clientName }))}</p>\n`
    : "";
  return htmlDocument(
    catalogue,
    catalogue.text("loggedOut.title"),
    `<h1>${escapeHtml(catalogue.text("loggedOut.heading"))}</h1>
${from}<p>${escapeHtml(catalogue.text("loggedOut.closeWindow"))}</p>`,
  );
}
