/**
 * The browser's sign-in and sign-out: `/auth/sign-in` starts an authorization-code flow with
 * PKCE (state, nonce and verifier in a pre-session row bound to the cookie), asking the provider
 * for a recent sign-in when the page names `maxAge` or `prompt=login`, `/auth/callback`
 * finishes it under a NEW session id, `/auth/sign-out` ends the session and hands back the
 * provider's RP-initiated logout URL with the session's ID token as its hint.
 */
import type { Hono } from "hono";
import { noAccessPage, providerUnavailablePage, signedOutPage, signInFailedPage } from "../pages/layout.ts";
import { pageContext } from "../pages/messages.ts";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { clearSessionId, readSessionId, writeSessionId } from "../sessions/cookie.ts";
import { idHash } from "../sessions/store.ts";
import type { Reauthentication } from "./relying-party.ts";
import { safeReturnTo } from "./return-to.ts";

export const CALLBACK_PATH = "/auth/callback";
export const SIGNED_OUT_PATH = "/auth/signed-out";

/** A day: what a page may ask as `maxAge` (the Manager asks REAUTHENTICATION_MAX_AGE_SECONDS). */
const MAX_AGE_LIMIT_SECONDS = 86_400;

/**
 * A sign-in's `maxAge` and `prompt` query parameters, which a page sends when the Manager asked
 * for a recent sign-in (403 `auth.reauthentication_required` with its `maxAge`) or the person
 * wants to sign in as another account; undefined for values the provider must not be sent.
 */
export function reauthenticationOf(
  maxAge: string | undefined,
  prompt: string | undefined,
): Reauthentication | undefined {
  const reauthentication: Reauthentication = {};
  if (maxAge !== undefined) {
    if (!/^\d{1,6}$/.test(maxAge) || Number(maxAge) > MAX_AGE_LIMIT_SECONDS) return undefined;
    reauthentication.maxAge = Number(maxAge);
  }
  if (prompt !== undefined) {
    if (prompt !== "login") return undefined;
    reauthentication.prompt = prompt;
  }
  return reauthentication;
}

export function registerSignIn(app: Hono<AdminEnv>, deps: AdminDeps) {
  const { sessions, relyingParty, cookie, logger, publicOrigin } = deps;
  const redirectUri = `${publicOrigin}${CALLBACK_PATH}`;

  app.get("/auth/sign-in", async (c) => {
    const returnTo = safeReturnTo(c.req.query("returnTo"));
    if (returnTo === undefined) {
      return c.text("returnTo must be a path of this site", 400);
    }
    const reauthentication = reauthenticationOf(c.req.query("maxAge"), c.req.query("prompt"));
    if (reauthentication === undefined) {
      return c.text(`maxAge must be whole seconds up to ${MAX_AGE_LIMIT_SECONDS}; prompt may be login`, 400);
    }
    // A session this browser still had ends here: sign-in always starts from nothing.
    const previous = readSessionId(c, cookie);
    if (previous !== undefined) await sessions.end(idHash(previous));
    let request: Awaited<ReturnType<typeof relyingParty.authorizationRequest>>;
    try {
      request = await relyingParty.authorizationRequest(redirectUri, {
        ...reauthentication,
        stepUp: c.req.query("stepUp") === "mfa",
      });
    } catch (err) {
      logger.error("sign-in unavailable: the OpenID provider did not answer", { err });
      return c.html(providerUnavailablePage(pageContext(c)), 503, { "retry-after": "30" });
    }
    const id = await sessions.startSignIn({
      state: request.state,
      nonce: request.nonce,
      codeVerifier: request.codeVerifier,
      returnTo,
    });
    writeSessionId(c, cookie, id);
    c.header("cache-control", "no-store");
    return c.redirect(request.url.toString(), 303);
  });

  app.get(CALLBACK_PATH, async (c) => {
    c.header("cache-control", "no-store");
    const id = readSessionId(c, cookie);
    const pending = id === undefined ? undefined : await sessions.takeSignIn(id);
    clearSessionId(c, cookie);
    const error = c.req.query("error");
    if (error === "access_denied") {
      return c.html(noAccessPage(pageContext(c), c.req.query("error_description")), 403);
    }
    if (pending === undefined || error !== undefined) return c.html(signInFailedPage(pageContext(c)), 400);
    // The URL as the provider sent the browser to it, whatever host header a proxy forwards.
    const callbackUrl = new URL(`${CALLBACK_PATH}${new URL(c.req.url).search}`, publicOrigin);
    try {
      const signedIn = await relyingParty.finishSignIn(callbackUrl, pending);
      const sessionId = await sessions.create(signedIn);
      writeSessionId(c, cookie, sessionId);
      logger.info("console sign-in", { sub: signedIn.sub });
      return c.redirect(pending.returnTo, 303);
    } catch (failure) {
      logger.warn("console sign-in failed", { error: String(failure) });
      return c.html(signInFailedPage(pageContext(c)), 400);
    }
  });

  app.post("/auth/sign-out", async (c) => {
    const id = readSessionId(c, cookie);
    const idToken = id === undefined ? undefined : await sessions.signOut(idHash(id));
    clearSessionId(c, cookie);
    c.header("cache-control", "no-store");
    const logoutUrl = await relyingParty.endSessionUrl(`${publicOrigin}${SIGNED_OUT_PATH}`, idToken);
    // The page navigates there: the provider ends its session (asking first only without the
    // hint, a console session already gone) and comes back.
    return c.json({ logoutUrl: logoutUrl.toString() });
  });

  app.get(SIGNED_OUT_PATH, (c) => c.html(signedOutPage(pageContext(c))));
}
