import { removeNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import { CHANGE_EFFECT, COLLECTION_MEANING, nestedApiError, UserParamsSchema } from "./nested-schema.ts";

export const removeUserRoute = clientAdminRoute({
  method: "delete",
  path: "/management/clients/{client}/users/{account_id}",
  tags: ["clients"],
  summary: "Remove from a client's users",
  operationId: "removeClientUser",
  description: `${COLLECTION_MEANING.users} ${CHANGE_EFFECT}`,
  request: { params: UserParamsSchema },
  responses: { 204: { description: "Removed" } },
  errors: ["client.not_found", "client.entry_not_found"],
});

export const removeUserHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof removeUserRoute> =>
  async (c) => {
    const params = c.req.valid("param");
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.nested-removed", actor, params.client, async () => {
      try {
        await removeNested(deps.sql, actor, params.client, "users", params.account_id);
      } catch (err) {
        throw nestedApiError(err);
      }
    });
    return c.body(null, 204);
  };
