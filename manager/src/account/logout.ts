import { z } from "@hono/zod-openapi";
import { logOut } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { currentSessionUid, SessionsEndedSchema } from "./sessions-schema.ts";

const LogoutRequestSchema = z
  .object({
    scope: z.enum(["session", "account"]).openapi({
      description:
        "`session`: the current session (the token's), with every client signed in through it. `account`: every session of the account, in every browser.",
      example: "session",
    }),
  })
  .openapi("LogoutRequest");

export const logoutRoute = accountRoute({
  method: "post",
  path: "/me/logout",
  tags: ["account"],
  summary: "Log out of this session or of the whole account",
  operationId: "logMeOut",
  description:
    "Ends the current session (`scope: session`) or every session of the account (`scope: account`): their clients' tokens are refused on the next request on every Manager and each client with a back-channel logout URI that had a sid in them is sent a back-channel logout. Other accounts remembered in the browser stay signed in (POST /api/v1/me/logout/all ends them too).",
  request: jsonBody(LogoutRequestSchema, { scope: "account" }),
  responses: {
    200: jsonResponse("Logged out", SessionsEndedSchema, { sessionsEnded: 3, backchannelLogoutsQueued: 2 }),
  },
  errors: BODY_ERRORS,
});

export const logoutHandler =
  (deps: AccountDeps): AppRouteHandler<typeof logoutRoute> =>
  async (c) => {
    const principal = c.get("account");
    const { scope } = c.req.valid("json");
    const current = await currentSessionUid(deps.sql, principal);
    const { ended } = await logOut(deps.sql, principal, scope, current, deps.logoutsQueued);
    return c.json(
      { sessionsEnded: ended.sessions.length, backchannelLogoutsQueued: ended.logoutsQueued },
      200,
    );
  };
