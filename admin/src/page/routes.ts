/**
 * The console's views as server routes (one URL per view, so links, reloads and the back
 * button work without a client router). A browser without a session is sent to sign in and
 * comes back to the view it asked for; an account whose session holds no operations token is
 * sent from the operations views to its account view, which says what it may do here.
 */

import { resolveLocale } from "@tjm/platform/locale";
import type { Context, Hono } from "hono";
import { homePage, LANGUAGE_PATH, notFoundPage, type Offered, type PageContext } from "../pages/layout.ts";
import { pageContext, writeLanguageCookie } from "../pages/messages.ts";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { readSessionId } from "../sessions/cookie.ts";
import { accessTokenFor, type Session } from "../sessions/sessions.ts";
import { safeReturnTo } from "../sign-in/return-to.ts";
import { accountView } from "./account-view.ts";
import { type loadPageAssets, registerAssets } from "./assets.ts";
import { clientsView, enrollmentView, jobsView, jobView, submitView, workersView } from "./views.ts";

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
      render: (
        c: Context<AdminEnv>,
        context: PageContext,
        offered: Offered,
        session: Session,
      ) => string | undefined,
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
      const context = pageContext(c);
      const html = render(c, context, offered, session);
      if (html === undefined) return c.html(notFoundPage(context), 404);
      c.header("cache-control", "no-cache");
      return c.html(html);
    };

  // The language switch: remembers the choice and goes back to the page it was on.
  app.get(LANGUAGE_PATH, (c) => {
    const locale = resolveLocale(c.req.query("locale") ?? "");
    const returnTo = safeReturnTo(c.req.query("returnTo"));
    if (locale === undefined || returnTo === undefined)
      return c.text("locale and returnTo are required", 400);
    writeLanguageCookie(c, locale, deps.cookie.secure);
    return c.redirect(returnTo, 303);
  });

  app.get("/", async (c) => {
    const session = await currentSession(c);
    if (session === undefined) return c.html(homePage(pageContext(c)));
    return c.redirect(offeredTo(session).operations ? "/jobs" : ACCOUNT_VIEW_PATH, 303);
  });
  app.get(
    "/jobs",
    view((_c, context, offered) => jobsView(context, offered), "operations"),
  );
  app.get(
    "/jobs/:jobId",
    view((c, context, offered) => {
      const jobId = c.req.param("jobId") as string;
      return UUID.test(jobId) ? jobView(context, offered, jobId) : undefined;
    }, "operations"),
  );
  app.get(
    "/submit",
    view((_c, context, offered) => submitView(context, offered), "operations"),
  );
  app.get(
    "/workers",
    view((_c, context, offered) => workersView(context, offered), "operations"),
  );
  app.get(
    "/enrollment",
    view((_c, context, offered) => enrollmentView(context, offered), "operations"),
  );
  app.get(
    "/clients",
    view((_c, context, offered) => clientsView(context, offered), "clientAdministration"),
  );
  app.get(
    ACCOUNT_VIEW_PATH,
    view((_c, context, offered, session) => accountView(context, offered, session.sub)),
  );
}
