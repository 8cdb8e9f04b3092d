import { addNested, listNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import {
  CHANGE_EFFECT,
  ClientCollectionSchema,
  COLLECTION_MEANING,
  nestedApiError,
  ResourceBodySchema,
} from "./nested-schema.ts";
import { ClientParamsSchema } from "./schema.ts";

export const addResourceRoute = clientAdminRoute({
  method: "post",
  path: "/management/clients/{client}/resources",
  tags: ["clients"],
  summary: "Add to a client's resources",
  operationId: "addClientResource",
  description: `${COLLECTION_MEANING.resources} ${CHANGE_EFFECT}`,
  request: { params: ClientParamsSchema, ...jsonBody(ResourceBodySchema, { resource: "account-portal" }) },
  responses: { 200: jsonResponse("The client's resources now", ClientCollectionSchema) },
  errors: [...BODY_ERRORS, "client.not_found"],
});

export const addResourceHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof addResourceRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const key = c.req.valid("json").resource;
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.nested-added", actor, reference, async () => {
      if (!deps.resources.has(key)) {
        throw new ApiError("validation.failed", "Validation failed", [
          {
            path: "resource",
            message: `'${key}' is not one of ${[...deps.resources].join(", ")}`,
            code: "client.resource_unknown",
          },
        ]);
      }
      try {
        return await addNested(deps.sql, actor, reference, "resources", key);
      } catch (err) {
        throw nestedApiError(err);
      }
    });
    return c.json({ items: await listNested(deps.sql, reference, "resources") }, 200);
  };
