/**
 * The account portal (/api/v1/me…): every route is an accountRoute (audience account-portal),
 * and the account is always the token's subject, never a parameter.
 */
import { createRouter } from "../platform/http.ts";
import { cancelIdentifierChangeHandler, cancelIdentifierChangeRoute } from "./cancel-identifier-change.ts";
import { changePassword, changePasswordRoute } from "./change-password.ts";
import { revokeConnectedAppHandler, revokeConnectedAppRoute } from "./connected-app-revoke.ts";
import { listConnectedAppsHandler, listConnectedAppsRoute } from "./connected-apps-list.ts";
import { createAvatarUploadUrlHandler, createAvatarUploadUrlRoute } from "./create-avatar-upload-url.ts";
import { deleteAccountHandler, deleteAccountRoute } from "./delete-account.ts";
import type { AccountDeps } from "./deps.ts";
import { createDeveloperAppHandler, createDeveloperAppRoute } from "./developer-app-create.ts";
import { deleteDeveloperAppHandler, deleteDeveloperAppRoute } from "./developer-app-delete.ts";
import { readDeveloperAppHandler, readDeveloperAppRoute } from "./developer-app-read.ts";
import {
  rotateDeveloperAppSecretHandler,
  rotateDeveloperAppSecretRoute,
} from "./developer-app-rotate-secret.ts";
import { updateDeveloperAppHandler, updateDeveloperAppRoute } from "./developer-app-update.ts";
import { listDeveloperAppsHandler, listDeveloperAppsRoute } from "./developer-apps-list.ts";
import { logoutHandler, logoutRoute } from "./logout.ts";
import { logoutAllHandler, logoutAllRoute } from "./logout-all.ts";
import { codeStartHandler, startEmailRoute, startSmsRoute } from "./mfa-code-start.ts";
import { listFactorsHandler, listFactorsRoute } from "./mfa-list.ts";
import {
  regenerateRecoveryCodesHandler,
  regenerateRecoveryCodesRoute,
} from "./mfa-recovery-codes-regenerate.ts";
import { removeFactorHandler, removeFactorRoute } from "./mfa-remove.ts";
import { startTotpHandler, startTotpRoute } from "./mfa-totp-start.ts";
import {
  verificationHandler,
  verifyEmailRoute,
  verifySmsRoute,
  verifyTotpRoute,
} from "./mfa-verification.ts";
import { readAvatarHandler, readAvatarRoute } from "./read-avatar.ts";
import { readMeHandler, readMeRoute } from "./read-me.ts";
import { readRememberedAvatarHandler, readRememberedAvatarRoute } from "./read-remembered-avatar.ts";
import { rememberedAccountsHandler, rememberedAccountsRoute } from "./remembered-accounts.ts";
import { revokeSessionHandler, revokeSessionRoute } from "./session-revoke.ts";
import { listSessionsHandler, listSessionsRoute } from "./sessions-list.ts";
import { revokeOtherSessionsHandler, revokeOtherSessionsRoute } from "./sessions-revoke-others.ts";
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
  app.openapi(listSessionsRoute, listSessionsHandler(deps));
  app.openapi(revokeOtherSessionsRoute, revokeOtherSessionsHandler(deps));
  app.openapi(revokeSessionRoute, revokeSessionHandler(deps));
  app.openapi(rememberedAccountsRoute, rememberedAccountsHandler(deps));
  app.openapi(readRememberedAvatarRoute, readRememberedAvatarHandler(deps));
  app.openapi(logoutAllRoute, logoutAllHandler(deps));
  app.openapi(logoutRoute, logoutHandler(deps));
  app.openapi(listConnectedAppsRoute, listConnectedAppsHandler(deps));
  app.openapi(revokeConnectedAppRoute, revokeConnectedAppHandler(deps));
  app.openapi(deleteAccountRoute, deleteAccountHandler(deps));
  app.openapi(listFactorsRoute, listFactorsHandler(deps));
  // Before /me/security/mfa/{factor_id}: "recovery-codes" is not a factor id.
  app.openapi(regenerateRecoveryCodesRoute, regenerateRecoveryCodesHandler(deps));
  app.openapi(startTotpRoute, startTotpHandler(deps));
  app.openapi(verifyTotpRoute, verificationHandler(deps, "totp"));
  app.openapi(startSmsRoute, codeStartHandler(deps, "sms"));
  app.openapi(verifySmsRoute, verificationHandler(deps, "sms"));
  app.openapi(startEmailRoute, codeStartHandler(deps, "email"));
  app.openapi(verifyEmailRoute, verificationHandler(deps, "email"));
  app.openapi(removeFactorRoute, removeFactorHandler(deps));
  app.openapi(listDeveloperAppsRoute, listDeveloperAppsHandler(deps));
  app.openapi(createDeveloperAppRoute, createDeveloperAppHandler(deps));
  app.openapi(readDeveloperAppRoute, readDeveloperAppHandler(deps));
  app.openapi(updateDeveloperAppRoute, updateDeveloperAppHandler(deps));
  app.openapi(deleteDeveloperAppRoute, deleteDeveloperAppHandler(deps));
  app.openapi(rotateDeveloperAppSecretRoute, rotateDeveloperAppSecretHandler(deps));
  return app;
}
