import { z } from "@hono/zod-openapi";
import { logOutBrowser } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { currentSessionUid, SessionsEndedSchema } from "./sessions-schema.ts";

const BrowserLoggedOutSchema = SessionsEndedSchema.extend({
  accounts: z.array(z.uuid()).openapi({
    description: "The accounts logged out: every one the browser remembered",
    example: ["3b241101-e2bb-4255-8caf-4136c566a962", "9c5b94b1-35ad-49bb-b118-8e8fc24abf80"],
  }),
}).openapi("BrowserLoggedOut");

export const logoutAllRoute = accountRoute({
  method: "post",
  path: "/me/logout/all",
  tags: ["account"],
  summary: "Log out every account remembered in this browser",
  operationId: "logOutEverywhereInBrowser",
  description:
    "Every account remembered in the browser holding the token's session (GET /api/v1/me/accounts) is logged out of its session in that browser, and the browser forgets them. Each client with a back-channel logout URI that had a sid in an ended session is sent a back-channel logout after the answer, so relying parties such as the Admin console end their own sessions within seconds. Sessions of these accounts in other browsers stay. No body.",
  responses: {
    200: jsonResponse("Every remembered account is logged out", BrowserLoggedOutSchema, {
      accounts: ["3b241101-e2bb-4255-8caf-4136c566a962", "9c5b94b1-35ad-49bb-b118-8e8fc24abf80"],
      sessionsEnded: 2,
      backchannelLogoutsQueued: 4,
    }),
  },
  errors: [],
});

export const logoutAllHandler =
  (deps: AccountDeps): AppRouteHandler<typeof logoutAllRoute> =>
  async (c) => {
    const principal = c.get("account");
    const current = await currentSessionUid(deps.sql, principal);
    const { accountIds, ended } = await logOutBrowser(deps.sql, principal, current, deps.logoutsQueued);
    return c.json(
      {
        accounts: accountIds,
        sessionsEnded: ended.sessions.length,
        backchannelLogoutsQueued: ended.logoutsQueued,
      },
      200,
    );
  };
