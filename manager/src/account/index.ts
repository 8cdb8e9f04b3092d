/**
 * The account portal (/api/v1/me…): every route is an accountRoute (audience account-portal),
 * and the account is always the token's subject, never a parameter.
 */
import { createRouter } from "../platform/http.ts";
import { cancelIdentifierChangeHandler, cancelIdentifierChangeRoute } from "./cancel-identifier-change.ts";
import { changePassword, changePasswordRoute } from "./change-password.ts";
import { createAvatarUploadUrlHandler, createAvatarUploadUrlRoute } from "./create-avatar-upload-url.ts";
import type { AccountDeps } from "./deps.ts";
import { readAvatarHandler, readAvatarRoute } from "./read-avatar.ts";
import { readMeHandler, readMeRoute } from "./read-me.ts";
import { updateIdentifiers, updateIdentifiersRoute } from "./update-identifiers.ts";
import { updateProfileHandler, updateProfileRoute } from "./update-profile.ts";
import { verifyIdentifier, verifyIdentifierRoute } from "./verify-identifier.ts";

export type { AccountDeps } from "./deps.ts";

/** Mounted under /api/v1. */
export function accountApp(deps: AccountDeps) {
  const app = createRouter();
  app.openapi(readMeRoute, readMeHandler(deps));
  app.openapi(updateProfileRoute, updateProfileHandler(deps));
  app.openapi(createAvatarUploadUrlRoute, createAvatarUploadUrlHandler(deps));
  app.openapi(readAvatarRoute, readAvatarHandler(deps));
  app.openapi(updateIdentifiersRoute, updateIdentifiers(deps));
  app.openapi(verifyIdentifierRoute, verifyIdentifier(deps));
  app.openapi(cancelIdentifierChangeRoute, cancelIdentifierChangeHandler(deps));
  app.openapi(changePasswordRoute, changePassword(deps));
  return app;
}
