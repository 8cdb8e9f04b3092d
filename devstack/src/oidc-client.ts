/**
 * A headless client of any OIDC provider, for the tests, the demo and the bench. openid-client
 * does the protocol (discovery, PKCE, the authorization URL, every token request); this file
 * plays the browser: it follows the provider's redirects by hand with a cookie jar and fills in
 * the sign-in and consent forms of TJM's pages.
 *
 * Contract of those pages: the authorization URL redirects to an interaction page with a POST
 * form holding `email` and `password`; a wrong password answers that page again with a
 * `role="alert"` element; a right one redirects, possibly through a consent page whose form has
 * a submit `decision` = `allow`, to the client's redirect URI, which is never fetched.
 */
import { decodeJwt } from "jose";
import {
  AuthorizationResponseError,
  allowInsecureRequests,
  authorizationCodeGrant,
  buildAuthorizationUrl,
  buildEndSessionUrl,
  ClientSecretBasic,
  type Configuration,
  calculatePKCECodeChallenge,
  clientCredentialsGrant,
  customFetch,
  discovery,
  None,
  ResponseBodyError,
  randomPKCECodeVerifier,
  randomState,
  refreshTokenGrant,
  type TokenEndpointResponse,
  WWWAuthenticateChallengeError,
} from "openid-client";
import { BrowserSession } from "./browser-session.ts";
import { alertText, type HtmlForm, parseForms, unescapeHtml } from "./html-forms.ts";

export { BrowserSession, type BrowserSessionOptions, type StoredCookie } from "./browser-session.ts";
export { alertText, type HtmlForm, parseForms, unescapeHtml } from "./html-forms.ts";

/** Redirects followed in a row before giving up: a loop between provider URLs would never end. */
const MAX_REDIRECTS = 20;
const BODY_EXCERPT_CHARS = 300;

/** An OAuth error answer (at the token endpoint or in a redirect); `code` is its `error` value. */
export class OAuthError extends Error {
  constructor(
    readonly code: string,
    readonly description: string | undefined,
    readonly status: number | undefined,
  ) {
    super(`${code}${description ? `: ${description}` : ""}${status ? ` (HTTP ${status})` : ""}`);
    this.name = "OAuthError";
  }
}

export interface ClientOptions {
  /** The issuer identifier; its discovery document is at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  /** Sent with client_secret_basic (TJM's default); without it the client is public (`none`). */
  clientSecret?: string;
  /** Called before every HTTP request, discovery and token requests included. */
  onRequest?: (method: string, url: string) => void;
}

export interface AuthorizationOptions extends ClientOptions {
  redirectUri: string;
  /** A resource indicator (RFC 8707), sent with the authorization and the token request. */
  resource?: string;
  /** Default "openid". */
  scope?: string;
  /** The `prompt` parameter (e.g. "consent", which offline_access needs); none by default. */
  prompt?: string;
  /** Reuse a session (its cookies) across sign-ins or replicas; a fresh one by default. */
  session?: BrowserSession;
  /** The `claims` parameter (OIDC Core §5.5), e.g. an essential acr; JSON. */
  claims?: string;
  /** The `max_age` parameter: a sign-in older than this many seconds is asked again. */
  maxAge?: number;
}

export interface Credentials {
  email: string;
  password: string;
  /** What to answer a consent page; default "allow". A "deny" ends in an `access_denied` OAuthError. */
  consent?: "allow" | "deny";
  /**
   * Send every provider request from here on to this origin instead (a second replica): the
   * test of a sign-in started on one replica and finished on another.
   */
  providerOrigin?: string;
  /**
   * The answer to the second step's page (an account with a factor): the method (`totp`, `sms`,
   * `email` or `recovery`) and its code, asked for when the page is shown. An SMS or e-mail
   * method first presses its send button.
   */
  secondFactor?: { method: "totp" | "sms" | "email" | "recovery"; code: () => string | Promise<string> };
}

export interface Tokens {
  accessToken: string;
  idToken?: string;
  refreshToken?: string;
  expiresIn?: number;
  /** The access token's payload, decoded, not verified; empty for an opaque token. */
  claims: Record<string, unknown>;
}

export interface SignInResult extends Tokens {
  /** HTTP requests made, discovery and token requests included. */
  roundTrips: number;
  session: BrowserSession;
}

export interface ProviderPage {
  url: URL;
  status: number;
  html: string;
}

/** A sign-in under way: the page the provider stopped at, or already the redirect back. */
export interface PendingAuthorization {
  session: BrowserSession;
  /** The sign-in page; undefined when the session was signed in already. */
  page: ProviderPage | undefined;
  /** The redirect to the client, once reached. */
  callbackUrl: URL | undefined;
  /** HTTP requests made so far, discovery included. */
  readonly roundTrips: number;
  /** Counts a request and reports it to `onRequest`. */
  readonly track: (method: string, url: string) => void;
  readonly configuration: Configuration;
  readonly options: AuthorizationOptions;
  readonly codeVerifier: string;
  readonly state: string;
}

/**
 * Discovery with a fetch that reports each request; openid-client keeps that fetch in the
 * configuration, so the token requests made with it are reported too.
 */
async function discover(options: ClientOptions, track: (method: string, url: string) => void = () => {}) {
  const fetchCounted = (url: string, init: { method: string }) => {
    track(init.method, url);
    return fetch(url, init as RequestInit);
  };
  const auth = options.clientSecret === undefined ? None() : ClientSecretBasic(options.clientSecret);
  return discovery(new URL(options.issuer), options.clientId, undefined, auth, {
    execute: [allowInsecureRequests],
    [customFetch]: fetchCounted,
  }).catch(asOAuthError);
}

/** openid-client's error answers become OAuthError (with the `error` code); others pass through. */
function asOAuthError(error: unknown): never {
  if (error instanceof ResponseBodyError)
    throw new OAuthError(error.error, error.error_description, error.status);
  if (error instanceof AuthorizationResponseError)
    throw new OAuthError(error.error, error.error_description, undefined);
  if (error instanceof WWWAuthenticateChallengeError) {
    const parameters = error.cause[0]?.parameters;
    throw new OAuthError(parameters?.error ?? "invalid_client", parameters?.error_description, error.status);
  }
  throw error;
}

function tokensFrom(response: TokenEndpointResponse): Tokens {
  let claims: Record<string, unknown> = {};
  try {
    claims = decodeJwt(response.access_token);
  } catch {
    // An opaque access token: nothing to decode.
  }
  return {
    accessToken: response.access_token,
    ...(response.id_token === undefined ? {} : { idToken: response.id_token }),
    ...(response.refresh_token === undefined ? {} : { refreshToken: response.refresh_token }),
    ...(response.expires_in === undefined ? {} : { expiresIn: response.expires_in }),
    claims,
  };
}

async function unexpected(response: Response, url: URL, what: string): Promise<Error> {
  const body = (await response.text().catch(() => "")).slice(0, BODY_EXCERPT_CHARS);
  return new Error(`${what}: HTTP ${response.status} from ${url}: ${body}`);
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function isRedirectUri(url: URL, redirectUri: string): boolean {
  const expected = new URL(redirectUri);
  return url.origin === expected.origin && url.pathname === expected.pathname;
}

/**
 * Makes a request in the pending sign-in's session and follows redirects until it reaches the
 * redirect URI (never fetched) or a page.
 */
async function walk(
  pending: PendingAuthorization,
  url: URL,
  init: RequestInit,
  origin?: string,
): Promise<void> {
  let target = url;
  let request = init;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    if (origin !== undefined) target = new URL(`${target.pathname}${target.search}`, origin);
    pending.track(request.method ?? "GET", target.toString());
    const response = await pending.session.fetch(target, request);
    if (isRedirect(response.status)) {
      const location = response.headers.get("location");
      if (location === null) throw await unexpected(response, target, "redirect without a Location");
      const next = new URL(location, target);
      if (isRedirectUri(next, pending.options.redirectUri)) {
        pending.callbackUrl = next;
        pending.page = undefined;
        return;
      }
      target = next;
      // As browsers do: 307 and 308 repeat the request, the others turn it into a GET.
      if (response.status !== 307 && response.status !== 308) request = { method: "GET" };
      continue;
    }
    const contentType = response.headers.get("content-type") ?? "";
    if (
      (response.status === 200 || (response.status >= 400 && response.status < 500)) &&
      contentType.includes("html")
    ) {
      pending.page = { url: target, status: response.status, html: await response.text() };
      return;
    }
    throw await unexpected(response, target, "unexpected answer from the provider");
  }
  throw new Error(`more than ${MAX_REDIRECTS} redirects from ${url}`);
}

/** Step 1: discovery, PKCE, and a GET of the authorization URL up to the sign-in page. */
export async function startAuthorization(options: AuthorizationOptions): Promise<PendingAuthorization> {
  let roundTrips = 0;
  const track = (method: string, url: string) => {
    roundTrips++;
    options.onRequest?.(method, url);
  };
  const configuration = await discover(options, track);
  const codeVerifier = randomPKCECodeVerifier();
  const state = randomState();
  const authorizationUrl = buildAuthorizationUrl(configuration, {
    redirect_uri: options.redirectUri,
    scope: options.scope ?? "openid",
    code_challenge: await calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
    ...(options.resource === undefined ? {} : { resource: options.resource }),
    ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
    ...(options.claims === undefined ? {} : { claims: options.claims }),
    ...(options.maxAge === undefined ? {} : { max_age: String(options.maxAge) }),
  });
  const pending: PendingAuthorization = {
    session: options.session ?? new BrowserSession(),
    page: undefined,
    callbackUrl: undefined,
    get roundTrips() {
      return roundTrips;
    },
    track,
    configuration,
    options,
    codeVerifier,
    state,
  };
  await walk(pending, authorizationUrl, { method: "GET" });
  if (pending.page !== undefined && pending.page.status !== 200) {
    const { url, status, html } = pending.page;
    throw new Error(
      `the authorization request failed: HTTP ${status} from ${url}: ${html.slice(0, BODY_EXCERPT_CHARS)}`,
    );
  }
  return pending;
}

function pageError(page: ProviderPage, what: string): Error {
  return new Error(
    `${what}: HTTP ${page.status} from ${page.url}: ${page.html.slice(0, BODY_EXCERPT_CHARS)}`,
  );
}

async function submit(
  pending: PendingAuthorization,
  form: HtmlForm,
  values: Record<string, string>,
  origin?: string,
) {
  const body = new URLSearchParams({ ...form.fields, ...values });
  await walk(
    pending,
    new URL(form.action),
    { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body },
    origin,
  );
}

/** The value of the second step's method radio for `method` (`<type>:<id>`, or `recovery`). */
function methodValue(html: string, method: string): string | undefined {
  for (const match of html.matchAll(/name="method" value="([^"]+)"/g)) {
    const value = match[1] as string;
    if (value === method || value.startsWith(`${method}:`)) return value;
  }
  return undefined;
}

/** Step 2: posts the credentials, answers a consent page, and exchanges the code for tokens. */
export async function finishAuthorization(
  pending: PendingAuthorization,
  credentials: Credentials,
): Promise<SignInResult> {
  const origin = credentials.providerOrigin;
  let signedIn = false;
  let consented = false;
  let secondStep = false;
  let codeSent = false;
  // Each form is answered at most once: the same page again means the provider refused it.
  for (let page = pending.page; page !== undefined; page = pending.page) {
    const alert = alertText(page.html);
    if (alert !== undefined && (signedIn || consented)) throw new Error(`sign-in refused: ${alert}`);
    const forms = parseForms(page.html, page.url);
    const login = forms.find((form) => "password" in form.fields);
    const consent = forms.find((form) => form.submits.some((button) => button.name === "decision"));
    const factor = forms.find((form) => "code" in form.fields && page.html.includes('name="method"'));
    if (factor !== undefined && credentials.secondFactor !== undefined && !secondStep) {
      const { method, code } = credentials.secondFactor;
      const value = methodValue(page.html, method);
      if (value === undefined) throw pageError(page, `the second step offers no ${method} method`);
      if ((method === "sms" || method === "email") && !codeSent) {
        codeSent = true;
        const send = factor.submits.find((button) => button.name === "method" && button.value === value);
        const sendAction = /formaction="([^"]+)"/.exec(
          page.html.slice(page.html.indexOf(`value="${value}" formaction`)),
        )?.[1];
        if (send === undefined || sendAction === undefined) throw pageError(page, "no send button");
        await submit(
          pending,
          { ...factor, action: new URL(unescapeHtml(sendAction), page.url).toString() },
          { method: value },
          origin,
        );
        continue;
      }
      secondStep = true;
      await submit(pending, factor, { method: value, code: await code() }, origin);
    } else if (login !== undefined && !signedIn) {
      signedIn = true;
      await submit(pending, login, { email: credentials.email, password: credentials.password }, origin);
    } else if (consent !== undefined && !consented) {
      consented = true;
      await submit(pending, consent, { decision: credentials.consent ?? "allow" }, origin);
    } else {
      throw pageError(page, "a provider page that is neither the sign-in form nor a consent to give");
    }
  }
  const callbackUrl = pending.callbackUrl as URL;
  const error = callbackUrl.searchParams.get("error");
  if (error !== null) {
    throw new OAuthError(error, callbackUrl.searchParams.get("error_description") ?? undefined, undefined);
  }
  const { options } = pending;
  const response = await authorizationCodeGrant(
    pending.configuration,
    callbackUrl,
    { pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state },
    options.resource === undefined ? undefined : { resource: options.resource },
  ).catch(asOAuthError);
  return { ...tokensFrom(response), roundTrips: pending.roundTrips, session: pending.session };
}

/** The whole authorization-code flow with PKCE, as a browser would go through it. */
export async function signIn(options: AuthorizationOptions & Credentials): Promise<SignInResult> {
  return finishAuthorization(await startAuthorization(options), options);
}

export async function refresh(
  options: ClientOptions & { refreshToken: string; resource?: string },
): Promise<Tokens> {
  const configuration = await discover(options, options.onRequest);
  const parameters = options.resource === undefined ? undefined : { resource: options.resource };
  return tokensFrom(
    await refreshTokenGrant(configuration, options.refreshToken, parameters).catch(asOAuthError),
  );
}

export async function clientCredentialsToken(
  options: ClientOptions & { clientSecret: string; resource: string; scope?: string },
): Promise<Tokens> {
  const configuration = await discover(options, options.onRequest);
  const parameters = { resource: options.resource, ...(options.scope ? { scope: options.scope } : {}) };
  return tokensFrom(await clientCredentialsGrant(configuration, parameters).catch(asOAuthError));
}

/** The provider's RP-initiated logout URL (a browser navigates there; nothing is fetched but discovery). */
export async function endSessionUrl(
  options: ClientOptions & { idTokenHint?: string; postLogoutRedirectUri?: string; state?: string },
): Promise<URL> {
  const configuration = await discover(options, options.onRequest);
  return buildEndSessionUrl(configuration, {
    ...(options.idTokenHint === undefined ? {} : { id_token_hint: options.idTokenHint }),
    ...(options.postLogoutRedirectUri === undefined
      ? {}
      : { post_logout_redirect_uri: options.postLogoutRedirectUri }),
    ...(options.state === undefined ? {} : { state: options.state }),
  });
}
