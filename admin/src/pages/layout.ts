/**
 * Server-rendered pages: the sign-in flow's (plain HTML, no script) and the console's views
 * (the same frame with its navigation, the live-updates notice and the page's script). No
 * inline script or style anywhere: the CSP forbids both.
 */
import { escapeHtml } from "@tjm/platform/html";
import { ASSETS_PATH } from "../page/assets.ts";

export { escapeHtml };

function head(title: string, script: boolean): string {
  return `<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · TJM Admin console</title>
<link rel="icon" href="${ASSETS_PATH}/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS_PATH}/style.css">${
    script ? `\n<script type="module" src="${ASSETS_PATH}/app.js"></script>` : ""
  }</head>`;
}

/** A whole page: `body` is HTML already escaped by the caller. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
${head(title, false)}
<body>
<header><p class="brand">TJM Admin console</p></header>
<main id="main">
${body}
</main>
</body>
</html>
`;
}

export type ViewName = "jobs" | "job" | "submit" | "workers" | "enrollment" | "account";

/** What the signed-in account may use here: decided by the tokens its session holds. */
export interface Offered {
  /** An operations token: jobs, workers, enrollment tokens and the event stream. */
  operations: boolean;
  /** An admin-console token: the account holds the client-admin role. */
  clientAdministration: boolean;
}

const NAVIGATION: { view: ViewName; path: string; label: string; needs?: keyof Offered }[] = [
  { view: "jobs", path: "/jobs", label: "Jobs", needs: "operations" },
  { view: "submit", path: "/submit", label: "Submit a job", needs: "operations" },
  { view: "workers", path: "/workers", label: "Workers", needs: "operations" },
  { view: "enrollment", path: "/enrollment", label: "Enrollment tokens", needs: "operations" },
  { view: "account", path: "/account", label: "Your account" },
];

/**
 * A view of the signed-in console: `body` (already escaped) is its static part, which the
 * script fills; `data` becomes `data-*` attributes of <body> the script reads (e.g. the job id).
 * The navigation names only the views `offered` allows.
 */
export function consolePage(
  view: ViewName,
  title: string,
  body: string,
  offered: Offered,
  data: Record<string, string> = {},
) {
  const links = NAVIGATION.filter((item) => item.needs === undefined || offered[item.needs])
    .map(
      (item) =>
        `<li><a href="${item.path}"${item.view === view ? ' aria-current="page"' : ""}>${item.label}</a></li>`,
    )
    .join("");
  const attributes = Object.entries({ view, ...data })
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join("");
  return `<!doctype html>
<html lang="en">
${head(title, true)}
<body${attributes}>
<a class="skip-link" href="#main">Skip to the content</a>
<header class="console-header">
<p class="brand">TJM Admin console</p>
<nav aria-label="Main"><ul>${links}</ul></nav>
<button type="button" id="sign-out" class="secondary">Sign out</button>
</header>
<div id="live-notice" class="notice" role="status" aria-live="polite"></div>
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>
`;
}

/** The provider refused the sign-in (the account cancelled it, or may use nothing here). */
export function noAccessPage(description: string | undefined): string {
  return page(
    "No access",
    `<h1>No access</h1>
<p role="alert">The sign-in service did not let this sign-in reach the Admin console.</p>
${description ? `<p>The sign-in service said: ${escapeHtml(description)}</p>` : ""}
<p><a href="/auth/sign-in">Sign in again</a></p>`,
  );
}

export function signInFailedPage(): string {
  return page(
    "Sign-in failed",
    `<h1>Sign-in failed</h1>
<p role="alert">The sign-in could not be completed (it may have expired or been opened twice).</p>
<p><a href="/auth/sign-in">Sign in again</a></p>`,
  );
}

export function signedOutPage(): string {
  return page("Signed out", `<h1>Signed out</h1><p><a href="/auth/sign-in">Sign in again</a></p>`);
}

/** What `/` shows a browser without a session (a signed-in one goes to its first view). */
export function homePage(): string {
  return page(
    "Home",
    `<h1>Admin console</h1><p>Operators run the render fleet from here; every account sees its own.</p><p><a href="/auth/sign-in?returnTo=/">Sign in</a></p>`,
  );
}

export function providerUnavailablePage(): string {
  return page(
    "Sign-in unavailable",
    `<h1>Sign-in is unavailable</h1>
<p>The sign-in service does not answer right now, so nobody can sign in. Try again in a minute; if it lasts, the console's logs name the provider it tried.</p>`,
  );
}
