import { listNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { clientApiError } from "./errors.ts";
import { ClientCollectionSchema, COLLECTION_MEANING } from "./nested-schema.ts";
import { ClientParamsSchema } from "./schema.ts";

export const listUsersRoute = clientAdminRoute({
  method: "get",
  path: "/management/clients/{client}/users",
  tags: ["clients"],
  summary: "List a client's users",
  operationId: "listClientUsers",
  description: COLLECTION_MEANING.users,
  request: { params: ClientParamsSchema },
  responses: { 200: jsonResponse("The client's users", ClientCollectionSchema) },
  errors: ["client.not_found"],
});

export const listUsersHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof listUsersRoute> =>
  async (c) => {
    try {
      return c.json({ items: await listNested(deps.sql, c.req.valid("param").client, "users") }, 200);
    } catch (err) {
      throw clientApiError(err);
    }
  };
