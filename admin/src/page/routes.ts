/**
 * The console's views as server routes (one URL per view, so links, reloads and the back
 * button work without a client router). A browser without a session is sent to sign in and
 * comes back to the view it asked for; an account whose session holds no operations token is
 * sent from the operations views to its account view, which says what it may do here.
 */
import type { Context, Hono } from "hono";
import { homePage, type Offered } from "../pages/layout.ts";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { readSessionId } from "../sessions/cookie.ts";
import { accessTokenFor, type Session } from "../sessions/sessions.ts";
import { type loadPageAssets, registerAssets } from "./assets.ts";
import { accountView, enrollmentView, jobsView, jobView, submitView, workersView } from "./views.ts";

const ACCOUNT_VIEW_PATH = "/account";

/** What a session's tokens let its account use; the browser is never asked. */
function offeredTo(session: Session): Offered {
  return {
    operations: accessTokenFor(session, "operations") !== undefined,
    clientAdministration: accessTokenFor(session, "admin-console") !== undefined,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function registerPage(
  app: Hono<AdminEnv>,
  deps: AdminDeps,
  assets: ReturnType<typeof loadPageAssets>,
) {
  registerAssets(app, assets);

  const currentSession = (c: Context<AdminEnv>) => deps.sessions.current(readSessionId(c, deps.cookie));

  /** A view; `needs` the part of the console it belongs to, if not every account's. */
  const view =
    (
      render: (c: Context<AdminEnv>, offered: Offered, session: Session) => string | undefined,
      needs?: keyof Offered,
    ) =>
    async (c: Context<AdminEnv>) => {
      const session = await currentSession(c);
      if (session === undefined) {
        const url = new URL(c.req.url);
        const returnTo = encodeURIComponent(`${url.pathname}${url.search}`);
        return c.redirect(`/auth/sign-in?returnTo=${returnTo}`, 303);
      }
      const offered = offeredTo(session);
      if (needs !== undefined && !offered[needs]) return c.redirect(ACCOUNT_VIEW_PATH, 303);
      const html = render(c, offered, session);
      if (html === undefined) return c.text("not found", 404);
      c.header("cache-control", "no-cache");
      return c.html(html);
    };

  app.get("/", async (c) => {
    const session = await currentSession(c);
    if (session === undefined) return c.html(homePage());
    return c.redirect(offeredTo(session).operations ? "/jobs" : ACCOUNT_VIEW_PATH, 303);
  });
  app.get(
    "/jobs",
    view((_c, offered) => jobsView(offered), "operations"),
  );
  app.get(
    "/jobs/:jobId",
    view((c, offered) => {
      const jobId = c.req.param("jobId") as string;
      return UUID.test(jobId) ? jobView(offered, jobId) : undefined;
    }, "operations"),
  );
  app.get(
    "/submit",
    view((_c, offered) => submitView(offered), "operations"),
  );
  app.get(
    "/workers",
    view((_c, offered) => workersView(offered), "operations"),
  );
  app.get(
    "/enrollment",
    view((_c, offered) => enrollmentView(offered), "operations"),
  );
  app.get(
    ACCOUNT_VIEW_PATH,
    view((_c, offered, session) => accountView(offered, session.sub)),
  );
}
