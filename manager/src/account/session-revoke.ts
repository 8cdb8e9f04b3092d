import { revokeSession, SessionNotFoundError } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { AccountDeps } from "./deps.ts";
import { SessionIdParamsSchema } from "./sessions-schema.ts";

export const revokeSessionRoute = accountRoute({
  method: "delete",
  path: "/me/sessions/{id}",
  tags: ["account"],
  summary: "Revoke one of the account's sessions",
  operationId: "revokeMySession",
  description:
    "Ends the session (the current one too, if named): its clients' access tokens are refused on their next request on every Manager, their refresh tokens no longer work, and each client with a back-channel logout URI that had a sid in it is sent a back-channel logout (retried until delivered or out of attempts). A session of another account answers 404 exactly like one that does not exist, and nothing ends.",
  request: { params: SessionIdParamsSchema },
  responses: { 204: { description: "The session has ended" } },
  errors: ["session.not_found"],
});

export const revokeSessionHandler =
  (deps: AccountDeps): AppRouteHandler<typeof revokeSessionRoute> =>
  async (c) => {
    const principal = c.get("account");
    const { id } = c.req.valid("param");
    try {
      await revokeSession(deps.sql, principal, id, deps.logoutsQueued);
    } catch (err) {
      if (err instanceof SessionNotFoundError) {
        throw new ApiError("session.not_found", "the account has no live session with this id");
      }
      throw err;
    }
    return c.body(null, 204);
  };
