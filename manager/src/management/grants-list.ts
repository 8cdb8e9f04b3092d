import { z } from "@hono/zod-openapi";
import { listGrants } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { clientApiError } from "./errors.ts";
import { ClientGrantSchema, ClientParamsSchema } from "./schema.ts";

export const ClientGrantListSchema = z
  .object({ grants: z.array(ClientGrantSchema) })
  .openapi("ClientGrantList");

export const listGrantsRoute = clientAdminRoute({
  method: "get",
  path: "/management/clients/{client}/oauth-grants",
  tags: ["clients"],
  summary: "List a client's protected-resource grants",
  operationId: "listClientGrants",
  description:
    "One grant per resource the client may get tokens for (oauth_client_resources, also seen through the nested resources routes), by resource_key.",
  request: { params: ClientParamsSchema },
  responses: { 200: jsonResponse("The client's grants", ClientGrantListSchema) },
  errors: ["client.not_found"],
});

export const listGrantsHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof listGrantsRoute> =>
  async (c) => {
    try {
      const grants = await listGrants(deps.sql, c.req.valid("param").client);
      return c.json(
        { grants: grants.map((grant) => ({ ...grant, grantedAt: grant.grantedAt.toISOString() })) },
        200,
      );
    } catch (err) {
      throw clientApiError(err);
    }
  };
