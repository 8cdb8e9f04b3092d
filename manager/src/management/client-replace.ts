import { defineClient, findClient, replaceClient } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import { ClientParamsSchema, ClientSchema, ClientUpdateSchema, problemsError, toClient } from "./schema.ts";

export const replaceClientRoute = clientAdminRoute({
  method: "put",
  path: "/management/clients/{client}",
  tags: ["clients"],
  summary: "Replace a client's definition",
  operationId: "replaceClient",
  description:
    "The whole representation, judged like a creation's: an omitted optional field takes its default (empty lists, null), so it is removed. Its type (confidential or public), secret and grants stay: grants change through oauth-grants and the nested resources routes. A change of its projects bumps the authorization version (tenant tokens name their projects).",
  request: {
    params: ClientParamsSchema,
    ...jsonBody(ClientUpdateSchema, {
      name: "Reports dashboard",
      grantTypes: ["authorization_code", "refresh_token"],
      redirectUris: ["https://reports.example.com/callback"],
      postLogoutRedirectUris: ["https://reports.example.com/"],
      backchannelLogoutUri: null,
      firstParty: false,
      projectIds: [],
      accessTokenTtlSeconds: 300,
    }),
  },
  responses: { 200: jsonResponse("The client as it is now", ClientSchema) },
  errors: [...BODY_ERRORS, "client.not_found"],
});

export const replaceClientHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof replaceClientRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const body = c.req.valid("json");
    const actor = { accountId: c.get("clientAdmin").accountId };
    const replaced = await auditedChange(deps.sql, "client.updated", actor, reference, async () => {
      const stored = await findClient(deps.sql, reference);
      const defined = defineClient(
        {
          ...body,
          backchannelLogoutUri: body.backchannelLogoutUri ?? undefined,
          accessTokenTtlSeconds: body.accessTokenTtlSeconds ?? undefined,
          resources: [],
          public: stored.public,
        },
        deps.resources,
      );
      if (!defined.ok) throw problemsError(defined.problems);
      return replaceClient(deps.sql, actor, stored.id, defined.value);
    });
    return c.json(toClient(replaced), 200);
  };
