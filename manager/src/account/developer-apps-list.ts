import { DEVELOPER_APPS_PER_ACCOUNT, listClients } from "../identity/clients/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { DeveloperAppListSchema, toDeveloperApp } from "./developer-apps-schema.ts";

export const listDeveloperAppsRoute = accountRoute({
  method: "get",
  path: "/me/developer-apps",
  tags: ["account"],
  summary: "List the account's developer apps",
  operationId: "listMyDeveloperApps",
  description: `The OAuth clients the account owns, oldest first, with the most it may have (${DEVELOPER_APPS_PER_ACCOUNT}). See docs/client-management.md.`,
  responses: { 200: jsonResponse("The account's apps", DeveloperAppListSchema) },
  errors: [],
});

export const listDeveloperAppsHandler =
  (deps: AccountDeps): AppRouteHandler<typeof listDeveloperAppsRoute> =>
  async (c) => {
    const { items } = await listClients(
      deps.sql,
      { ownerAccountId: c.get("account").accountId },
      DEVELOPER_APPS_PER_ACCOUNT,
      0,
    );
    return c.json({ apps: items.map(toDeveloperApp), limit: DEVELOPER_APPS_PER_ACCOUNT }, 200);
  };
