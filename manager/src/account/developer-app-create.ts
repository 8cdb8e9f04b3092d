import { createManagedClient } from "../identity/clients/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { auditedChange } from "../management/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import {
  DeveloperAppBodySchema,
  DeveloperAppWithSecretSchema,
  defineDeveloperApp,
  limitError,
  toDeveloperApp,
} from "./developer-apps-schema.ts";

export const createDeveloperAppRoute = accountRoute({
  method: "post",
  path: "/me/developer-apps",
  tags: ["account"],
  summary: "Create a developer app",
  operationId: "createMyDeveloperApp",
  description:
    "An OAuth client the account owns. It gets only `openid profile email`: never first-party, no TJM resource, no client_credentials, https redirect URIs (http on a loopback address for a native app), at most 10 per account; each refusal is a 400 with its own code. A confidential app's secret is in the answer once (`Cache-Control: no-store`).",
  request: {
    ...jsonBody(DeveloperAppBodySchema, {
      name: "My reading list",
      type: "confidential",
      applicationType: "web",
      grantTypes: ["authorization_code", "refresh_token"],
      redirectUris: ["https://app.example.com/callback"],
      scopes: ["openid", "profile", "email"],
    }),
  },
  responses: { 201: jsonResponse("The app, with its secret shown once", DeveloperAppWithSecretSchema) },
  errors: [...BODY_ERRORS],
});

export const createDeveloperAppHandler =
  (deps: AccountDeps): AppRouteHandler<typeof createDeveloperAppRoute> =>
  async (c) => {
    const body = c.req.valid("json");
    const { accountId } = c.get("account");
    const actor = { accountId, ownClientsOf: accountId };
    const created = await auditedChange(deps.sql, "client.created", actor, undefined, async () => {
      const { definition, metadata } = defineDeveloperApp(body);
      try {
        return await createManagedClient(deps.sql, actor, definition, deps.clientSecretKey, {
          ownerAccountId: accountId,
          metadata,
        });
      } catch (err) {
        throw limitError(err);
      }
    });
    c.header("cache-control", "no-store");
    return c.json({ ...toDeveloperApp(created.client), clientSecret: created.clientSecret ?? null }, 201);
  };
