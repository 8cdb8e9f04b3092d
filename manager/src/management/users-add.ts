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
  UserBodySchema,
} from "./nested-schema.ts";
import { ClientParamsSchema } from "./schema.ts";

export const addUserRoute = clientAdminRoute({
  method: "post",
  path: "/management/clients/{client}/users",
  tags: ["clients"],
  summary: "Add to a client's users",
  operationId: "addClientUser",
  description: `${COLLECTION_MEANING.users} ${CHANGE_EFFECT}`,
  request: {
    params: ClientParamsSchema,
    ...jsonBody(UserBodySchema, { accountId: "0b6f3c1e-9a2d-4e8b-8c7f-5d1a2b3c4d5e" }),
  },
  responses: { 200: jsonResponse("The client's users now", ClientCollectionSchema) },
  errors: [...BODY_ERRORS, "client.not_found"],
});

export const addUserHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof addUserRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const key = c.req.valid("json").accountId;
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.nested-added", actor, reference, async () => {
      try {
        return await addNested(deps.sql, actor, reference, "users", key);
      } catch (err) {
        throw nestedApiError(err);
      }
    });
    return c.json({ items: await listNested(deps.sql, reference, "users") }, 200);
  };
