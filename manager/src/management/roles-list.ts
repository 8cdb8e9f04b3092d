import { listNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { clientApiError } from "./errors.ts";
import { ClientCollectionSchema, COLLECTION_MEANING } from "./nested-schema.ts";
import { ClientParamsSchema } from "./schema.ts";

export const listRolesRoute = clientAdminRoute({
  method: "get",
  path: "/management/clients/{client}/roles",
  tags: ["clients"],
  summary: "List a client's roles",
  operationId: "listClientRoles",
  description: COLLECTION_MEANING.roles,
  request: { params: ClientParamsSchema },
  responses: { 200: jsonResponse("The client's roles", ClientCollectionSchema) },
  errors: ["client.not_found"],
});

export const listRolesHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof listRolesRoute> =>
  async (c) => {
    try {
      return c.json({ items: await listNested(deps.sql, c.req.valid("param").client, "roles") }, 200);
    } catch (err) {
      throw clientApiError(err);
    }
  };
