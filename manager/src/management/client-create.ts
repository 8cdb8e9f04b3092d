import { createManagedClient, defineClient } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import { ClientCreateSchema, ClientWithSecretSchema, problemsError, toClient } from "./schema.ts";

export const createClientRoute = clientAdminRoute({
  method: "post",
  path: "/management/clients",
  tags: ["clients"],
  summary: "Create a client",
  operationId: "createClient",
  description:
    "A confidential client's secret is in the answer once (`Cache-Control: no-store`) and stored only as its HMAC. The definition is judged whole: each broken rule is a `details[]` item with its own code (redirect URIs exact, https or loopback http, no fragment; grant and response types consistent; token lifetime bounded; known resources and projects).",
  request: {
    ...jsonBody(ClientCreateSchema, {
      name: "Reports dashboard",
      type: "confidential",
      grantTypes: ["authorization_code", "refresh_token"],
      redirectUris: ["https://reports.example.com/callback"],
      resources: ["account-portal"],
    }),
  },
  responses: { 201: jsonResponse("The client, with its secret shown once", ClientWithSecretSchema) },
  errors: [...BODY_ERRORS],
});

export const createClientHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof createClientRoute> =>
  async (c) => {
    const body = c.req.valid("json");
    const actor = { accountId: c.get("clientAdmin").accountId };
    const created = await auditedChange(deps.sql, "client.created", actor, undefined, async () => {
      const defined = defineClient(
        {
          ...body,
          backchannelLogoutUri: body.backchannelLogoutUri ?? undefined,
          accessTokenTtlSeconds: body.accessTokenTtlSeconds ?? undefined,
          public: body.type === "public",
        },
        deps.resources,
      );
      if (!defined.ok) throw problemsError(defined.problems);
      return createManagedClient(deps.sql, actor, defined.value, deps.clientSecretKey);
    });
    c.header("cache-control", "no-store");
    return c.json({ ...toClient(created.client), clientSecret: created.clientSecret ?? null }, 201);
  };
