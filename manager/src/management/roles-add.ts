import { addNested, listNested } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import {
  CHANGE_EFFECT,
  ClientCollectionSchema,
  COLLECTION_MEANING,
  nestedApiError,
  RoleBodySchema,
} from "./nested-schema.ts";
import { ClientParamsSchema } from "./schema.ts";

export const addRoleRoute = clientAdminRoute({
  method: "post",
  path: "/management/clients/{client}/roles",
  tags: ["clients"],
  summary: "Add to a client's roles",
  operationId: "addClientRole",
  description: `${COLLECTION_MEANING.roles} ${CHANGE_EFFECT}`,
  request: { params: ClientParamsSchema, ...jsonBody(RoleBodySchema, { role: "client-admin" }) },
  responses: { 200: jsonResponse("The client's roles now", ClientCollectionSchema) },
  errors: [...BODY_ERRORS, "client.not_found"],
});

export const addRoleHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof addRoleRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const key = c.req.valid("json").role;
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.nested-added", actor, reference, async () => {
      try {
        return await addNested(deps.sql, actor, reference, "roles", key);
      } catch (err) {
        throw nestedApiError(err);
      }
    });
    return c.json({ items: await listNested(deps.sql, reference, "roles") }, 200);
  };
