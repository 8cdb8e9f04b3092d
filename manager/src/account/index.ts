/**
 * The account portal (/api/v1/me…): every route is an accountRoute (audience account-portal),
 * and the account is always the token's subject, never a parameter.
 */
import { createRouter } from "../platform/http.ts";
import { revokeConnectedAppHandler, revokeConnectedAppRoute } from "./connected-app-revoke.ts";
import { listConnectedAppsHandler, listConnectedAppsRoute } from "./connected-apps-list.ts";
import { deleteAccountHandler, deleteAccountRoute } from "./delete-account.ts";
import type { AccountDeps } from "./deps.ts";
import { logoutHandler, logoutRoute } from "./logout.ts";
import { logoutAllHandler, logoutAllRoute } from "./logout-all.ts";
import { rememberedAccountsHandler, rememberedAccountsRoute } from "./remembered-accounts.ts";
import { revokeSessionHandler, revokeSessionRoute } from "./session-revoke.ts";
import { listSessionsHandler, listSessionsRoute } from "./sessions-list.ts";
import { revokeOtherSessionsHandler, revokeOtherSessionsRoute } from "./sessions-revoke-others.ts";

export type { AccountDeps } from "./deps.ts";

/** Mounted under /api/v1. */
export function accountApp(deps: AccountDeps) {
  return createRouter()
    .openapi(listSessionsRoute, listSessionsHandler(deps))
    .openapi(revokeOtherSessionsRoute, revokeOtherSessionsHandler(deps))
    .openapi(revokeSessionRoute, revokeSessionHandler(deps))
    .openapi(rememberedAccountsRoute, rememberedAccountsHandler(deps))
    .openapi(logoutAllRoute, logoutAllHandler(deps))
    .openapi(logoutRoute, logoutHandler(deps))
    .openapi(listConnectedAppsRoute, listConnectedAppsHandler(deps))
    .openapi(revokeConnectedAppRoute, revokeConnectedAppHandler(deps))
    .openapi(deleteAccountRoute, deleteAccountHandler(deps));
}
