import { ClientAuthorizationNotFoundError, revokeConnectedApp } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { AccountDeps } from "./deps.ts";
import { ClientIdParamsSchema } from "./sessions-schema.ts";

export const revokeConnectedAppRoute = accountRoute({
  method: "delete",
  path: "/me/connected-apps/{client_id}",
  tags: ["account"],
  summary: "Revoke one client's access to the account",
  operationId: "revokeMyConnectedApp",
  description:
    "Every grant the client holds from the account is revoked with its refresh tokens; its access tokens are refused on their next request on every Manager. The client alone is signed out of the account's sessions (sent a back-channel logout for each, when it has a back-channel logout URI); the sessions and their other clients stay signed in. A client without any grant or session of the account answers 404.",
  request: { params: ClientIdParamsSchema },
  responses: { 204: { description: "The client's access has ended" } },
  errors: ["session.client_not_found"],
});

export const revokeConnectedAppHandler =
  (deps: AccountDeps): AppRouteHandler<typeof revokeConnectedAppRoute> =>
  async (c) => {
    const { client_id: clientId } = c.req.valid("param");
    try {
      await revokeConnectedApp(deps.sql, c.get("account"), clientId, deps.logoutsQueued);
    } catch (err) {
      if (err instanceof ClientAuthorizationNotFoundError) {
        throw new ApiError(
          "session.client_not_found",
          "the client holds no grant and no session of the account",
        );
      }
      throw err;
    }
    return c.body(null, 204);
  };
