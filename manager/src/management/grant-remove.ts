import { removeGrant } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import { ResourceKeyParamsSchema } from "./schema.ts";

export const removeGrantRoute = clientAdminRoute({
  method: "delete",
  path: "/management/clients/{client}/oauth-grants/{resource_key}",
  tags: ["clients"],
  summary: "Remove a client's grant of a protected resource",
  operationId: "removeClientGrant",
  description:
    "Bumps the client's authorization version in the same transaction: every token it holds is refused on its next request, and the provider refuses it new tokens for the resource (`invalid_target`).",
  request: { params: ResourceKeyParamsSchema },
  responses: { 204: { description: "The grant is removed" } },
  errors: ["client.not_found", "client.grant_not_found"],
});

export const removeGrantHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof removeGrantRoute> =>
  async (c) => {
    const { client: reference, resource_key: resource } = c.req.valid("param");
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.grant-removed", actor, reference, () =>
      removeGrant(deps.sql, actor, reference, resource),
    );
    return c.body(null, 204);
  };
