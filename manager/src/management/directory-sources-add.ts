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
  DirectorySourceBodySchema,
  nestedApiError,
} from "./nested-schema.ts";
import { ClientParamsSchema } from "./schema.ts";

export const addDirectorySourceRoute = clientAdminRoute({
  method: "post",
  path: "/management/clients/{client}/directory-sources",
  tags: ["clients"],
  summary: "Add to a client's directory sources",
  operationId: "addClientDirectorySource",
  description: `${COLLECTION_MEANING["directory-sources"]} ${CHANGE_EFFECT}`,
  request: { params: ClientParamsSchema, ...jsonBody(DirectorySourceBodySchema, { source: "built-in" }) },
  responses: { 200: jsonResponse("The client's directory sources now", ClientCollectionSchema) },
  errors: [...BODY_ERRORS, "client.not_found"],
});

export const addDirectorySourceHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof addDirectorySourceRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const key = c.req.valid("json").source;
    const actor = { accountId: c.get("clientAdmin").accountId };
    await auditedChange(deps.sql, "client.nested-added", actor, reference, async () => {
      try {
        return await addNested(deps.sql, actor, reference, "directory-sources", key);
      } catch (err) {
        throw nestedApiError(err);
      }
    });
    return c.json({ items: await listNested(deps.sql, reference, "directory-sources") }, 200);
  };
