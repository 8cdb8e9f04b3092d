import { findClient } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { clientApiError } from "./errors.ts";
import { ClientParamsSchema, ClientSchema, toClient } from "./schema.ts";

export const readClientRoute = clientAdminRoute({
  method: "get",
  path: "/management/clients/{client}",
  tags: ["clients"],
  summary: "Read a client by its UUID or its public client_id",
  operationId: "readClient",
  description: "Never its secret. A deleted client is 404.",
  request: { params: ClientParamsSchema },
  responses: { 200: jsonResponse("The client", ClientSchema) },
  errors: ["client.not_found"],
});

export const readClientHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof readClientRoute> =>
  async (c) => {
    try {
      return c.json(toClient(await findClient(deps.sql, c.req.valid("param").client)), 200);
    } catch (err) {
      throw clientApiError(err);
    }
  };
