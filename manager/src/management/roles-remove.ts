import { removeNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import { CHANGE_EFFECT, COLLECTION_MEANING, nestedApiError, RoleParamsSchema } from "./nested-schema.ts";

export const removeRoleRoute = clientAdminRoute({
  method: "delete",
  path: "/management/clients/{client}/roles/{role}",
  tags: ["clients"],
  summary: "Remove from a client's roles",
  operationId: "removeClientRole",
  description: `${COLLECTION_MEANING.roles} ${CHANGE_EFFECT}`,
  request: { params: RoleParamsSchema },
  responses: { 204: { description: "Removed" } },
  errors: ["client.not_found", "client.entry_not_found"],
});

export const removeRoleHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof removeRoleRoute> =>
  async (c) => {
    const params = c.req.valid("param");
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.nested-removed", actor, params.client, async () => {
      try {
        await removeNested(deps.sql, actor, params.client, "roles", params.role);
      } catch (err) {
        throw nestedApiError(err);
      }
    });
    return c.body(null, 204);
  };
