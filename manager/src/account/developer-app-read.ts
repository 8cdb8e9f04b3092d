import { findClient } from "../identity/clients/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { clientApiError } from "../management/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { DeveloperAppParamsSchema, DeveloperAppSchema, toDeveloperApp } from "./developer-apps-schema.ts";

export const readDeveloperAppRoute = accountRoute({
  method: "get",
  path: "/me/developer-apps/{client}",
  tags: ["account"],
  summary: "Read one of the account's developer apps",
  operationId: "readMyDeveloperApp",
  description: "Never its secret. Another account's app is 404, as one that does not exist.",
  request: { params: DeveloperAppParamsSchema },
  responses: { 200: jsonResponse("The app", DeveloperAppSchema) },
  errors: ["client.not_found"],
});

export const readDeveloperAppHandler =
  (deps: AccountDeps): AppRouteHandler<typeof readDeveloperAppRoute> =>
  async (c) => {
    const { accountId } = c.get("account");
    try {
      const app = await findClient(deps.sql, c.req.valid("param").client, {
        accountId,
        ownClientsOf: accountId,
      });
      return c.json(toDeveloperApp(app), 200);
    } catch (err) {
      throw clientApiError(err);
    }
  };
