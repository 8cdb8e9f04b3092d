import { revokeOtherSessions } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { currentSessionUid, SessionsEndedSchema } from "./sessions-schema.ts";

export const revokeOtherSessionsRoute = accountRoute({
  method: "post",
  path: "/me/sessions/revoke-others",
  tags: ["account"],
  summary: "Revoke every session but the current one",
  operationId: "revokeMyOtherSessions",
  description:
    "Ends every session of the account except the one the token came from, as DELETE /api/v1/me/sessions/{id} ends one. No body. Answers how many ended (0 when there was none).",
  responses: {
    200: jsonResponse("The other sessions have ended", SessionsEndedSchema, {
      sessionsEnded: 2,
      backchannelLogoutsQueued: 1,
    }),
  },
  errors: [],
});

export const revokeOtherSessionsHandler =
  (deps: AccountDeps): AppRouteHandler<typeof revokeOtherSessionsRoute> =>
  async (c) => {
    const principal = c.get("account");
    const current = await currentSessionUid(deps.sql, principal);
    const { ended } = await revokeOtherSessions(deps.sql, principal, current, deps.logoutsQueued);
    return c.json(
      { sessionsEnded: ended.sessions.length, backchannelLogoutsQueued: ended.logoutsQueued },
      200,
    );
  };
