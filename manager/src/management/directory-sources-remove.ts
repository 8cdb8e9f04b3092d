import { removeNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import {
  CHANGE_EFFECT,
  COLLECTION_MEANING,
  DirectorySourceParamsSchema,
  nestedApiError,
} from "./nested-schema.ts";

export const removeDirectorySourceRoute = clientAdminRoute({
  method: "delete",
  path: "/management/clients/{client}/directory-sources/{source}",
  tags: ["clients"],
  summary: "Remove from a client's directory sources",
  operationId: "removeClientDirectorySource",
  description: `${COLLECTION_MEANING["directory-sources"]} ${CHANGE_EFFECT}`,
  request: { params: DirectorySourceParamsSchema },
  responses: { 204: { description: "Removed" } },
  errors: ["client.not_found", "client.entry_not_found"],
});

export const removeDirectorySourceHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof removeDirectorySourceRoute> =>
  async (c) => {
    const params = c.req.valid("param");
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.nested-removed", actor, params.client, async () => {
      try {
        await removeNested(deps.sql, actor, params.client, "directory-sources", params.source);
      } catch (err) {
        throw nestedApiError(err);
      }
    });
    return c.body(null, 204);
  };
