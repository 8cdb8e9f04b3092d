/**
 * The account portal (/api/v1/me…): every route is an accountRoute (audience account-portal),
 * and the account is always the token's subject, never a parameter.
 */
import { createRouter } from "../platform/http.ts";
import { cancelIdentifierChangeHandler, cancelIdentifierChangeRoute } from "./cancel-identifier-change.ts";
import { changePassword, changePasswordRoute } from "./change-password.ts";
import type { AccountDeps } from "./deps.ts";
import { updateIdentifiers, updateIdentifiersRoute } from "./update-identifiers.ts";
import { verifyIdentifier, verifyIdentifierRoute } from "./verify-identifier.ts";

export type { AccountDeps } from "./deps.ts";

/** Mounted under /api/v1. */
export function accountApp(deps: AccountDeps) {
  return createRouter()
    .openapi(updateIdentifiersRoute, updateIdentifiers(deps))
    .openapi(verifyIdentifierRoute, verifyIdentifier(deps))
    .openapi(cancelIdentifierChangeRoute, cancelIdentifierChangeHandler(deps))
    .openapi(changePasswordRoute, changePassword(deps));
}
