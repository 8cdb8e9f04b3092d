import { z } from "@hono/zod-openapi";
import { listConnectedApps } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { ConnectedAppSchema, isoOrNull } from "./sessions-schema.ts";

const ConnectedAppListSchema = z
  .object({ apps: z.array(ConnectedAppSchema).openapi({ description: "By client id" }) })
  .openapi("ConnectedAppList");

export const listConnectedAppsRoute = accountRoute({
  method: "get",
  path: "/me/connected-apps",
  tags: ["account"],
  summary: "List the clients the account granted",
  operationId: "listMyConnectedApps",
  description:
    "Every client holding a live grant of the account (the Admin console and this portal's own client included), with the OpenID scopes and the resources it was granted and when the grants were first and last used.",
  responses: {
    200: jsonResponse("The account's connected apps", ConnectedAppListSchema, {
      apps: [
        {
          clientId: "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31",
          name: "Reporting dashboard",
          scopes: ["openid"],
          resources: [{ resource: "urn:tjm:account-portal", scopes: ["access"] }],
          firstUsedAt: "2026-10-02T08:00:00.000Z",
          lastUsedAt: "2026-11-27T11:40:19.000Z",
        },
      ],
    }),
  },
  errors: [],
});

export const listConnectedAppsHandler =
  (deps: AccountDeps): AppRouteHandler<typeof listConnectedAppsRoute> =>
  async (c) => {
    const apps = await listConnectedApps(deps.sql, c.get("account").accountId);
    return c.json(
      {
        apps: apps.map((app) => ({
          clientId: app.clientId,
          name: app.name ?? null,
          scopes: app.scopes.openid,
          resources: Object.entries(app.scopes.resources)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([resource, scopes]) => ({ resource, scopes })),
          firstUsedAt: isoOrNull(app.firstUsedAt),
          lastUsedAt: isoOrNull(app.lastUsedAt),
        })),
      },
      200,
    );
  };
