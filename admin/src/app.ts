/** The Admin console's HTTP app: createAdminApp(deps) wires the features; nothing connects here. */
import { Hono } from "hono";
import { EventFanout } from "./events/fanout.ts";
import { EVENTS_PATH, registerEvents } from "./events/relay.ts";
import { SessionWatch } from "./events/session-watch.ts";
import { loadPageAssets } from "./page/assets.ts";
import { registerPage } from "./page/routes.ts";
import type { AdminDeps, AdminEnv } from "./platform/context.ts";
import type { Sql } from "./platform/db.ts";
import {
  answerError,
  BodyTooLargeError,
  bodyTooLarge,
  closeWhenBodyUnread,
  limitBody,
  requestId,
  SMALL_BODY_MAX_BYTES,
  sameOriginJson,
  securityHeaders,
} from "./platform/http.ts";
import {
  ACCOUNT_PORTAL_PATH,
  AVATAR_MAX_BYTES,
  AVATAR_UPLOAD_PATH,
  registerAccountPortal,
} from "./proxy/account-portal.ts";
import { CLIENTS_PROXY_PATH, registerClientsProxy } from "./proxy/clients.ts";
import { PROXY_PATH, registerProxy } from "./proxy/routes.ts";
import { readSessionId } from "./sessions/cookie.ts";
import { BACKCHANNEL_LOGOUT_PATH, registerBackchannelLogout } from "./sign-in/backchannel-logout.ts";
import { registerSignIn } from "./sign-in/routes.ts";

export type { AdminDeps } from "./platform/context.ts";

export interface AdminApp {
  app: Hono<AdminEnv>;
  /** Ends every open event stream (at shutdown). */
  stop(): void;
}

const DEFAULT_STREAM_CHECK_MS = 1000;
/** The Manager's own default MAX_BODY_BYTES: a job the Manager takes passes the console too. */
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Every 2 s: a refused token's stream ends well inside 5 s; a thousand streams cost the Manager ten requests. */
const DEFAULT_STANDING_CHECK_MS = 2000;

export function createAdminApp(deps: AdminDeps & { sql: Sql; fetch?: typeof fetch }): AdminApp {
  const fetchImpl = deps.fetch ?? fetch;
  const app = new Hono<AdminEnv>();
  const watch = new SessionWatch({
    sql: deps.sql,
    idleMinutes: deps.sessions.idleMinutes,
    intervalMs: deps.streamCheckMs ?? DEFAULT_STREAM_CHECK_MS,
    logger: deps.logger,
  });

  const proxyMaxBytes = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  app.use(requestId());
  app.use(securityHeaders());
  app.use(closeWhenBodyUnread());
  app.use(
    limitBody((path) => {
      if (path === AVATAR_UPLOAD_PATH) return AVATAR_MAX_BYTES;
      return path.startsWith(`${PROXY_PATH}/`) ||
        path.startsWith(`${ACCOUNT_PORTAL_PATH}/`) ||
        path.startsWith(CLIENTS_PROXY_PATH)
        ? proxyMaxBytes
        : SMALL_BODY_MAX_BYTES;
    }),
  );
  app.use(sameOriginJson(deps.publicOrigin, [BACKCHANNEL_LOGOUT_PATH], [AVATAR_UPLOAD_PATH]));
  app.onError((error, c) => {
    if (error instanceof BodyTooLargeError) return bodyTooLarge(c, error.maxBytes);
    deps.logger.error("request failed", {
      requestId: c.get("requestId"),
      path: c.req.path,
      error: String(error),
    });
    return answerError(c, "internal.error", "internal error");
  });
  app.notFound((c) => answerError(c, "route.not_found", `No route ${c.req.method} ${c.req.path}`));

  registerSignIn(app, deps);
  registerBackchannelLogout(app, deps, deps.sql);

  app.use("/api/*", async (c, next) => {
    // An open event stream is not activity: an unattended tab still times out.
    const session = await deps.sessions.current(readSessionId(c, deps.cookie), c.req.path !== EVENTS_PATH);
    if (session === undefined) {
      return answerError(c, "auth.session_missing", "no valid session; sign in");
    }
    c.set("session", session);
    return next();
  });
  app.get("/api/session", (c) => {
    c.header("cache-control", "no-store");
    return c.json({ signedIn: true, sub: c.get("session").sub });
  });
  registerProxy(app, deps, fetchImpl);
  registerAccountPortal(app, deps, fetchImpl);
  registerClientsProxy(app, deps, fetchImpl);
  const fanout = new EventFanout({
    managerUrl: deps.managerUrl,
    sessions: {
      // A stream follows the session's operations token; a session that lost it (the operator
      // role removed) ends its streams like one that ended.
      current: async (id) => {
        const operations = (await deps.sessions.current(id, false))?.tokens.access.operations;
        return operations && { accessToken: operations.token, accessExpiresAt: operations.expiresAt };
      },
      end: (hash) => deps.sessions.end(hash),
    },
    checkMs: deps.standingCheckMs ?? DEFAULT_STANDING_CHECK_MS,
    logger: deps.logger,
    fetch: fetchImpl,
  });
  registerEvents(app, deps, watch, fanout);

  registerPage(app, deps, loadPageAssets());

  return {
    app,
    stop: () => {
      fanout.stop();
      watch.stop();
    },
  };
}
