/**
 * Every HTML page of every process, reached as a browser reaches it, carries its security
 * headers: a CSP that refuses framing (frame-ancestors 'none', and X-Frame-Options: DENY), no
 * inline script but one whose hash the page's own source list names, nosniff and a Referrer-
 * Policy. The crawl starts from the pages a person meets (the provider's sign-in, consent, error
 * and logout pages, form_post's answer, the API docs, the Admin console signed out and signed
 * in) and follows every same-origin link. Then /api/docs in Chromium: Scalar renders the
 * operations under its CSP, with no violation reported.
 */
import { createHash } from "node:crypto";
import { BrowserSession, parseForms, startAuthorization } from "@tjm/devstack/oidc-client";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DOCS_PATH, OPENAPI_PATH } from "../../manager/src/docs/index.ts";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { scalarBundle } from "../../manager/src/runtime.ts";
import { TestAdmin } from "../admin/admin-harness.ts";
import {
  createTestClient,
  resourceIndicator,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
/** The crawl follows links this many hops from the pages it starts from. */
const MAX_LINK_HOPS = 2;

interface CrawledPage {
  /** How the crawl reached it. */
  label: string;
  url: string;
  status: number;
  headers: Headers;
  html: string;
}

let admin: TestAdmin;
let operator: TestAccount;
let thirdParty: TestClient;
const pages = new Map<string, CrawledPage>();

function isHtml(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").startsWith("text/html");
}

/** Fetches `url` in `browser` and keeps the answer when it is a page. */
async function visit(browser: BrowserSession, url: string | URL, label: string, init?: RequestInit) {
  const response = await browser.fetch(url, init);
  const html = await response.text();
  if (isHtml(response)) {
    pages.set(`${label} ${url}`, {
      label,
      url: String(url),
      status: response.status,
      headers: response.headers,
      html,
    });
  }
  return { response, html };
}

/** Follows redirects from a response until a page (or a redirect to the unfetched callback). */
async function follow(browser: BrowserSession, from: URL, response: Response, label: string) {
  let url = from;
  let current = { response, html: "" };
  for (let hop = 0; hop < 10; hop++) {
    const location = current.response.headers.get("location");
    if (location === null) return { url, ...current };
    url = new URL(location, url);
    if (url.port === "9") return { url, ...current };
    current = await visit(browser, url, label);
  }
  throw new Error(`too many redirects from ${from}`);
}

function form(fields: Record<string, string>): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  };
}

/** The provider's pages, from a third-party client's sign-in to its logout. */
async function crawlProvider(): Promise<void> {
  const issuer = admin.manager.issuerUrl;
  const pending = await startAuthorization({
    issuer,
    clientId: thirdParty.clientId,
    redirectUri: thirdParty.redirectUri,
    resource: resourceIndicator(ACCOUNT_PORTAL_AUDIENCE),
  });
  const browser = pending.session;
  const signInUrl = pending.page?.url as URL;
  const signIn = await visit(browser, signInUrl, "sign-in page");
  const [loginForm] = parseForms(signIn.html, signInUrl).filter(
    (candidate) => "password" in candidate.fields,
  );
  if (!loginForm) throw new Error(`no sign-in form at ${signInUrl}`);
  await visit(browser, loginForm.action, "sign-in refused (400)", form({ email: "a\u0000b", password: "x" }));
  const signedIn = await visit(
    browser,
    loginForm.action,
    "sign-in",
    form({ ...loginForm.fields, ...operator }),
  );
  await follow(browser, new URL(loginForm.action), signedIn.response, "consent page");

  await visit(new BrowserSession(), `${issuer}/interaction/no-such-interaction`, "interaction expired (400)");
  await visit(new BrowserSession(), `${issuer}/auth?client_id=no-such-client`, "provider error page (400)");
  const formPost = new URL(`${issuer}/auth`);
  for (const [name, value] of Object.entries({
    client_id: thirdParty.clientId,
    redirect_uri: thirdParty.redirectUri,
    response_type: "code",
    response_mode: "form_post",
    scope: "openid",
  })) {
    formPost.searchParams.set(name, value);
  }
  await visit(new BrowserSession(), formPost, "form_post answer (PKCE missing)");

  const endSession = new URL(`${issuer}/session/end`);
  const confirm = await visit(browser, endSession, "logout confirmation");
  const [logoutForm] = parseForms(confirm.html, endSession);
  if (!logoutForm) throw new Error(`no logout form: ${confirm.html.slice(0, 300)}`);
  const confirmed = await visit(
    browser,
    logoutForm.action,
    "logout",
    form({ ...logoutForm.fields, logout: "yes" }),
  );
  await follow(browser, new URL(logoutForm.action), confirmed.response, "post-logout success");
}

/** The console's pages, signed out and signed in, and the Manager's API docs. */
async function crawlConsole(): Promise<void> {
  const signedOut = new BrowserSession();
  for (const path of ["/", "/auth/signed-out", "/auth/callback?error=access_denied", "/jobs"]) {
    await visit(signedOut, `${admin.baseUrl}${path}`, `console signed out: ${path}`);
  }
  const { browser } = await admin.signIn(operator);
  for (const path of ["/jobs", "/submit", "/workers", "/enrollment", `/jobs/${crypto.randomUUID()}`]) {
    await visit(browser, `${admin.baseUrl}${path}`, `console signed in: ${path}`);
  }
  await visit(new BrowserSession(), `${admin.manager.baseUrl}${DOCS_PATH}`, "API docs");
}

/** Every same-origin link of the pages found, followed as a signed-out browser. */
async function crawlLinks(): Promise<void> {
  const seen = new Set<string>();
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    for (const page of [...pages.values()]) {
      for (const [, href] of page.html.matchAll(/<a\s[^>]*href="([^"#]+)"/g)) {
        const target = new URL((href as string).replaceAll("&amp;", "&"), page.url);
        if (target.origin !== new URL(page.url).origin || seen.has(target.href)) continue;
        seen.add(target.href);
        await visit(new BrowserSession(), target, `linked from ${page.label}`);
      }
    }
  }
}

beforeAll(async () => {
  admin = await TestAdmin.start({ manager: { scalarBundle } });
  operator = await admin.operator();
  thirdParty = await createTestClient(admin.manager.sql, {
    resources: [ACCOUNT_PORTAL_AUDIENCE],
    firstParty: false,
    name: "Third-party client",
  });
  await crawlProvider();
  await crawlConsole();
  await crawlLinks();
}, 60_000);
afterAll(() => admin?.close());

/** A CSP as its directives' source lists. */
function directivesOf(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [(name as string).toLowerCase(), sources]),
  );
}

const sha256Source = (content: string) => `'sha256-${createHash("sha256").update(content).digest("base64")}'`;

/** Everything wrong with a page's security headers, in words. */
function headerProblems(page: CrawledPage): string[] {
  const problems: string[] = [];
  const policy = page.headers.get("content-security-policy");
  if (policy === null) return ["no Content-Security-Policy"];
  const directives = directivesOf(policy);
  const fallback = directives.get("default-src") ?? ["*"];
  const scripts = directives.get("script-src") ?? fallback;
  const styles = directives.get("style-src") ?? fallback;
  if (directives.get("frame-ancestors")?.join(" ") !== "'none'")
    problems.push("frame-ancestors is not 'none'");
  if (page.headers.get("x-frame-options") !== "DENY") problems.push("X-Frame-Options is not DENY");
  if (page.headers.get("x-content-type-options") !== "nosniff")
    problems.push("no X-Content-Type-Options: nosniff");
  if (!page.headers.get("referrer-policy")) problems.push("no Referrer-Policy");
  for (const unsafe of ["'unsafe-inline'", "'unsafe-eval'", "*", "data:", "http:", "https:"]) {
    if (scripts.includes(unsafe)) problems.push(`script-src allows ${unsafe}`);
  }
  if (fallback.includes("*")) problems.push("no default-src");
  if (!directives.has("base-uri")) problems.push("no base-uri");
  for (const [, attributes, content] of page.html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
    // A data block (the console's messages as JSON) is never run, so the CSP has no say in it.
    if (/\btype="application\/json"/.test(attributes as string)) continue;
    if (/\bsrc=/.test(attributes as string)) {
      if (!scripts.includes("'self'")) problems.push("a script file the CSP does not allow");
    } else if (!scripts.includes(sha256Source(content as string))) {
      problems.push("an inline script whose hash the CSP does not name");
    }
  }
  for (const [, content] of page.html.matchAll(/<style\b[^>]*>([\s\S]*?)<\/style>/g)) {
    if (!styles.includes(sha256Source(content as string)) && !styles.includes("'unsafe-inline'")) {
      problems.push("an inline style the CSP does not allow");
    }
  }
  return problems;
}

describe("the pages crawled", () => {
  it("include every kind of page a person meets", () => {
    const labels = new Set([...pages.values()].map((page) => page.label));
    for (const expected of [
      "sign-in page",
      "sign-in refused (400)",
      "consent page",
      "interaction expired (400)",
      "provider error page (400)",
      "form_post answer (PKCE missing)",
      "logout confirmation",
      "post-logout success",
      "console signed out: /",
      "console signed out: /auth/signed-out",
      "console signed out: /auth/callback?error=access_denied",
      "console signed in: /jobs",
      "console signed in: /enrollment",
      "API docs",
    ]) {
      expect(labels, expected).toContain(expected);
    }
    const consent = [...pages.values()].filter((page) => page.html.includes('name="decision"'));
    expect(consent.map((page) => page.label)).toEqual(["consent page"]);
  });

  it("each carry a CSP refusing framing and inline scripts, nosniff and a Referrer-Policy", () => {
    const problems = [...pages.values()].flatMap((page) =>
      headerProblems(page).map((problem) => `${page.label} (${page.url}, ${page.status}): ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it("form_post's answer allows exactly its one inline script", () => {
    const formPost = [...pages.values()].find((page) => page.label === "form_post answer (PKCE missing)");
    const scripts = directivesOf(formPost?.headers.get("content-security-policy") ?? "").get("script-src");
    expect(scripts).toHaveLength(1);
    expect(scripts?.[0]).toMatch(/^'sha256-/);
  });
});

describe("/api/docs in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 30_000);
  afterAll(() => browser?.close());

  /**
   * The one refusal Scalar meets: its bundled zod probes `new Function("")` (in a try) to decide
   * whether to compile validators, and falls back to interpreting them when the CSP says no.
   */
  const EVAL_PROBE = /^script-src refused eval at .*\/api\/docs\/scalar\.js:/;

  it("renders the operations with no CSP violation but zod's eval probe", async () => {
    const openapi = (await (await fetch(`${admin.manager.baseUrl}${OPENAPI_PATH}`)).json()) as {
      paths: Record<string, Record<string, { summary?: string }>>;
    };
    const summary = Object.values(openapi.paths)
      .flatMap((operations) => Object.values(operations))
      .find((operation) => operation.summary)?.summary as string;
    const page = await browser.newPage();
    const violations: string[] = [];
    await page.exposeFunction("reportViolation", (text: string) => violations.push(text));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (event) => {
        (window as unknown as { reportViolation(text: string): void }).reportViolation(
          `${event.violatedDirective} refused ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber}`,
        );
      });
    });
    await page.goto(`${admin.manager.baseUrl}${DOCS_PATH}`);
    await page.getByText(summary).first().waitFor({ state: "visible", timeout: 20_000 });
    expect(violations.filter((violation) => !EVAL_PROBE.test(violation))).toEqual([]);
    expect(violations.length).toBeLessThanOrEqual(1);
    await page.close();
  }, 40_000);
});
