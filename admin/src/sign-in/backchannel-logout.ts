/**
 * OpenID Connect Back-Channel Logout: the provider POSTs a signed logout token; every console
 * session of its sid (or, without one, its sub) ends. The one unsafe route without the CSRF
 * rule: it trusts only a token it verified, and each token only once (jti kept in PostgreSQL).
 */
import type { Hono } from "hono";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import type { Sql } from "../platform/db.ts";
import { recordLogoutTokenId } from "../sessions/store.ts";
import { LOGOUT_TOKEN_MAX_AGE_SECONDS } from "./relying-party.ts";

export const BACKCHANNEL_LOGOUT_PATH = "/auth/backchannel-logout";

export function registerBackchannelLogout(app: Hono<AdminEnv>, deps: AdminDeps, sql: Sql) {
  app.post(BACKCHANNEL_LOGOUT_PATH, async (c) => {
    c.header("cache-control", "no-store");
    const refuse = (reason: string) => {
      deps.logger.warn("back-channel logout refused", { reason });
      return c.json({ error: "invalid_request", error_description: reason }, 400);
    };
    const mediaType = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    if (mediaType !== "application/x-www-form-urlencoded")
      return refuse("a form-encoded logout_token is expected");
    const token = (await c.req.parseBody()).logout_token;
    if (typeof token !== "string") return refuse("logout_token is missing");
    let claims: Awaited<ReturnType<typeof deps.relyingParty.verifyLogoutToken>>;
    try {
      claims = await deps.relyingParty.verifyLogoutToken(token);
    } catch (error) {
      return refuse(
        `the logout token does not verify: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    // Remembered past the age any copy of it could still be accepted at.
    const keepUntil = new Date(((claims.iat ?? 0) + 2 * LOGOUT_TOKEN_MAX_AGE_SECONDS) * 1000);
    if (!(await recordLogoutTokenId(sql, claims.jti, keepUntil)))
      return refuse("the logout token was used before");
    const ended = await deps.sessions.endAllOf(
      typeof claims.sid === "string" ? { sid: claims.sid } : { sub: claims.sub as string },
    );
    deps.logger.info("back-channel logout", { sid: claims.sid, sub: claims.sub, ended });
    return c.body(null, 200);
  });
}
