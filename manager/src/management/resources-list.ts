import { listNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { clientApiError } from "./errors.ts";
import { ClientCollectionSchema, COLLECTION_MEANING } from "./nested-schema.ts";
import { ClientParamsSchema } from "./schema.ts";

export const listResourcesRoute = clientAdminRoute({
  method: "get",
  path: "/management/clients/{client}/resources",
  tags: ["clients"],
  summary: "List a client's resources",
  operationId: "listClientResources",
  description: COLLECTION_MEANING.resources,
  request: { params: ClientParamsSchema },
  responses: { 200: jsonResponse("The client's resources", ClientCollectionSchema) },
  errors: ["client.not_found"],
});

export const listResourcesHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof listResourcesRoute> =>
  async (c) => {
    try {
      return c.json({ items: await listNested(deps.sql, c.req.valid("param").client, "resources") }, 200);
    } catch (err) {
      throw clientApiError(err);
    }
  };
