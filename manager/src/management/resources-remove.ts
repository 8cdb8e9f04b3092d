import { removeNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import { CHANGE_EFFECT, COLLECTION_MEANING, nestedApiError, ResourceParamsSchema } from "./nested-schema.ts";

export const removeResourceRoute = clientAdminRoute({
  method: "delete",
  path: "/management/clients/{client}/resources/{resource_key}",
  tags: ["clients"],
  summary: "Remove from a client's resources",
  operationId: "removeClientResource",
  description: `${COLLECTION_MEANING.resources} ${CHANGE_EFFECT}`,
  request: { params: ResourceParamsSchema },
  responses: { 204: { description: "Removed" } },
  errors: ["client.not_found", "client.entry_not_found"],
});

export const removeResourceHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof removeResourceRoute> =>
  async (c) => {
    const params = c.req.valid("param");
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.nested-removed", actor, params.client, async () => {
      try {
        await removeNested(deps.sql, actor, params.client, "resources", params.resource_key);
      } catch (err) {
        throw nestedApiError(err);
      }
    });
    return c.body(null, 204);
  };
