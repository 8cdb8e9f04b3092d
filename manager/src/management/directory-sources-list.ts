import { listNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { clientApiError } from "./errors.ts";
import { ClientCollectionSchema, COLLECTION_MEANING } from "./nested-schema.ts";
import { ClientParamsSchema } from "./schema.ts";

export const listDirectorySourcesRoute = clientAdminRoute({
  method: "get",
  path: "/management/clients/{client}/directory-sources",
  tags: ["clients"],
  summary: "List a client's directory sources",
  operationId: "listClientDirectorySources",
  description: COLLECTION_MEANING["directory-sources"],
  request: { params: ClientParamsSchema },
  responses: { 200: jsonResponse("The client's directory sources", ClientCollectionSchema) },
  errors: ["client.not_found"],
});

export const listDirectorySourcesHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof listDirectorySourcesRoute> =>
  async (c) => {
    try {
      return c.json(
        { items: await listNested(deps.sql, c.req.valid("param").client, "directory-sources") },
        200,
      );
    } catch (err) {
      throw clientApiError(err);
    }
  };
