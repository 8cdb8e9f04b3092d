/**
 * The console's views as server routes (one URL per view, so links, reloads and the back
 * button work without a client router). A browser without a session is sent to sign in and
 * comes back to the view it asked for.
 */
import type { Context, Hono } from "hono";
import { homePage } from "../pages/layout.ts";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { readSessionId } from "../sessions/cookie.ts";
import { type loadPageAssets, registerAssets } from "./assets.ts";
import { enrollmentView, jobsView, jobView, submitView, workersView } from "./views.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function registerPage(
  app: Hono<AdminEnv>,
  deps: AdminDeps,
  assets: ReturnType<typeof loadPageAssets>,
) {
  registerAssets(app, assets);

  const signedIn = async (c: Context<AdminEnv>) =>
    (await deps.sessions.current(readSessionId(c, deps.cookie))) !== undefined;

  const view = (render: (c: Context<AdminEnv>) => string | undefined) => async (c: Context<AdminEnv>) => {
    if (!(await signedIn(c))) {
      const url = new URL(c.req.url);
      const returnTo = encodeURIComponent(`${url.pathname}${url.search}`);
      return c.redirect(`/auth/sign-in?returnTo=${returnTo}`, 303);
    }
    const html = render(c);
    if (html === undefined) return c.text("not found", 404);
    c.header("cache-control", "no-cache");
    return c.html(html);
  };

  app.get("/", async (c) => ((await signedIn(c)) ? c.redirect("/jobs", 303) : c.html(homePage())));
  app.get("/jobs", view(jobsView));
  app.get(
    "/jobs/:jobId",
    view((c) => {
      const jobId = c.req.param("jobId") as string;
      return UUID.test(jobId) ? jobView(jobId) : undefined;
    }),
  );
  app.get("/submit", view(submitView));
  app.get("/workers", view(workersView));
  app.get("/enrollment", view(enrollmentView));
}
