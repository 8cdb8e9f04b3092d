import { deleteManagedClient } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import { requireRecentAuthentication } from "../identity/tokens/recent-authentication.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import { ClientParamsSchema } from "./schema.ts";

export const deleteClientRoute = clientAdminRoute({
  method: "delete",
  path: "/management/clients/{client}",
  tags: ["clients"],
  summary: "Delete a client",
  operationId: "deleteClient",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS (403 `auth.reauthentication_required` with the `maxAge` to sign in again with). Every grant accounts gave the client is revoked with its refresh tokens; its access tokens are refused from the next request on every Manager; it alone is signed out of the sessions it was in (a back-channel logout sent where it has a URI), their other clients stay signed in.",
  request: { params: ClientParamsSchema },
  responses: { 204: { description: "The client is deleted" } },
  errors: ["client.not_found", "auth.reauthentication_required"],
});

export const deleteClientHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof deleteClientRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const admin = c.get("clientAdmin");
    const logouts = await auditedChange(deps.sql, "client.deleted", admin, reference, async () => {
      requireRecentAuthentication(admin, deps.reauthenticationMaxAgeSeconds);
      return deleteManagedClient(deps.sql, admin, reference);
    });
    if (logouts > 0) deps.logoutsQueued();
    return c.body(null, 204);
  };
