import { deleteManagedClient } from "../identity/clients/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { requireRecentAuthentication } from "../identity/tokens/recent-authentication.ts";
import { auditedChange } from "../management/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { AccountDeps } from "./deps.ts";
import { DeveloperAppParamsSchema } from "./developer-apps-schema.ts";

export const deleteDeveloperAppRoute = accountRoute({
  method: "delete",
  path: "/me/developer-apps/{client}",
  tags: ["account"],
  summary: "Delete one of the account's developer apps",
  operationId: "deleteMyDeveloperApp",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS. As a client's deletion in client management: every grant its users gave it ends with its refresh tokens, its access tokens are refused on their next request, it alone is signed out of their sessions. Another account's app is 404.",
  request: { params: DeveloperAppParamsSchema },
  responses: { 204: { description: "The app is deleted" } },
  errors: ["client.not_found", "auth.reauthentication_required"],
});

export const deleteDeveloperAppHandler =
  (deps: AccountDeps): AppRouteHandler<typeof deleteDeveloperAppRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const account = c.get("account");
    const actor = { accountId: account.accountId, ownClientsOf: account.accountId };
    const logouts = await auditedChange(deps.sql, "client.deleted", actor, reference, async () => {
      requireRecentAuthentication(account, deps.reauthenticationMaxAgeSeconds);
      return deleteManagedClient(deps.sql, actor, reference);
    });
    if (logouts > 0) deps.logoutsQueued();
    return c.body(null, 204);
  };
