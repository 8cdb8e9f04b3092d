import { findClient, replaceClient } from "../identity/clients/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { auditedChange } from "../management/errors.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import {
  DeveloperAppBodySchema,
  DeveloperAppParamsSchema,
  DeveloperAppSchema,
  defineDeveloperApp,
  toDeveloperApp,
} from "./developer-apps-schema.ts";

export const updateDeveloperAppRoute = accountRoute({
  method: "put",
  path: "/me/developer-apps/{client}",
  tags: ["account"],
  summary: "Replace one of the account's developer apps",
  operationId: "updateMyDeveloperApp",
  description:
    "The whole representation under the developer-app rules (as a creation's). Its type (confidential or public) stays: a different `type` is a 400 `developer.type_unchangeable` detail. Another account's app is 404.",
  request: {
    params: DeveloperAppParamsSchema,
    ...jsonBody(DeveloperAppBodySchema, {
      name: "My reading list",
      type: "confidential",
      applicationType: "web",
      grantTypes: ["authorization_code"],
      redirectUris: ["https://app.example.com/callback"],
    }),
  },
  responses: { 200: jsonResponse("The app as it is now", DeveloperAppSchema) },
  errors: [...BODY_ERRORS, "client.not_found"],
});

export const updateDeveloperAppHandler =
  (deps: AccountDeps): AppRouteHandler<typeof updateDeveloperAppRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const body = c.req.valid("json");
    const { accountId } = c.get("account");
    const actor = { accountId, ownClientsOf: accountId };
    const updated = await auditedChange(deps.sql, "client.updated", actor, reference, async () => {
      const stored = await findClient(deps.sql, reference, actor);
      if (stored.public !== (body.type === "public")) {
        throw new ApiError("validation.failed", "Validation failed", [
          { path: "type", message: "an app's type cannot change", code: "developer.type_unchangeable" },
        ]);
      }
      const { definition, metadata } = defineDeveloperApp(body);
      return replaceClient(deps.sql, actor, stored.id, definition, metadata);
    });
    return c.json(toDeveloperApp(updated), 200);
  };
