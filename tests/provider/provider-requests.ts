/**
 * Requests to the built-in provider that a protocol test makes by hand, below what the headless
 * client does for it: a sign-in form posted and answered as it is, a code taken from the
 * redirect without being exchanged, an authorization URL or a token request built field by field.
 */
import {
  alertText,
  type BrowserSession,
  type PendingAuthorization,
  parseForms,
} from "@tjm/devstack/oidc-client";
import type { TestAccount } from "../harness/identity.ts";

/** A provider answer, read once: status, redirect target and body. */
export interface ProviderAnswer {
  status: number;
  location: string | null;
  html: string;
  /** The `role="alert"` text of a page (a refused sign-in), if any. */
  alert: string | undefined;
}

async function answerOf(response: Response): Promise<ProviderAnswer> {
  const html = await response.text();
  return {
    status: response.status,
    location: response.headers.get("location"),
    html,
    alert: alertText(html),
  };
}

/** Posts the sign-in form of the pending authorization's page, as a browser would, and reads the answer. */
export async function postSignInForm(
  pending: PendingAuthorization,
  credentials: { email: string; password: string },
  origin?: string,
): Promise<ProviderAnswer> {
  const page = pending.page;
  if (!page) throw new Error("the authorization has no sign-in page: the session was signed in already");
  const form = parseForms(page.html, page.url).find((candidate) => "password" in candidate.fields);
  if (!form) throw new Error(`no sign-in form on ${page.url}: ${page.html.slice(0, 300)}`);
  const action = new URL(form.action);
  const target = origin === undefined ? action : new URL(`${action.pathname}${action.search}`, origin);
  const response = await pending.session.fetch(target, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...form.fields, ...credentials }),
  });
  return answerOf(response);
}

function isRedirectUri(url: URL, redirectUri: string): boolean {
  const expected = new URL(redirectUri);
  return url.origin === expected.origin && url.pathname === expected.pathname;
}

/** Follows redirects in the session from `answer` until one names the redirect URI (never fetched). */
export async function followToRedirectUri(
  session: BrowserSession,
  answer: ProviderAnswer,
  from: URL,
  redirectUri: string,
): Promise<URL> {
  let current = answer;
  let url = from;
  for (let hop = 0; hop < 10; hop++) {
    if (current.location === null) {
      throw new Error(
        `expected a redirect from ${url}, got HTTP ${current.status}: ${current.html.slice(0, 300)}`,
      );
    }
    const next = new URL(current.location, url);
    if (isRedirectUri(next, redirectUri)) return next;
    url = next;
    current = await answerOf(await session.fetch(next));
  }
  throw new Error(`too many redirects from ${from}`);
}

/** Signs in on the pending authorization's page and returns the redirect back, its code not exchanged. */
export async function callbackAfterSignIn(pending: PendingAuthorization, account: TestAccount): Promise<URL> {
  const answer = await postSignInForm(pending, account);
  return followToRedirectUri(
    pending.session,
    answer,
    new URL((pending.page as { url: URL }).url),
    pending.options.redirectUri,
  );
}

/** The authorization code a redirect back carries; throws on an error redirect. */
export function codeOf(callback: URL): string {
  const code = callback.searchParams.get("code");
  if (code === null) throw new Error(`the redirect carries no code: ${callback}`);
  return code;
}

/** `<issuer>/auth?…` with exactly the parameters given. */
export function authorizationRequest(issuerUrl: string, parameters: Record<string, string>): URL {
  const url = new URL(`${issuerUrl}/auth`);
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url;
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** A token request of a public client (client_id in the body), with exactly the fields given. */
export async function tokenRequest(issuerUrl: string, fields: Record<string, string>): Promise<TokenAnswer> {
  const response = await fetch(`${issuerUrl}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
