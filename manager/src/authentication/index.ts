/**
 * The public authentication routes (/api/v1/authentication/…): password recovery's three steps.
 * No token is asked for; the recovery domain (identity/recovery) limits and decides.
 */
import { createRouter } from "../platform/http.ts";
import { codeChallengesRoute, createCodeChallenge } from "./code-challenges.ts";
import { codeVerificationsRoute, verifyRecoveryCode } from "./code-verifications.ts";
import type { AuthenticationDeps } from "./deps.ts";
import { passwordResetsRoute, resetRecoveredPassword } from "./password-resets.ts";

export type { AuthenticationDeps } from "./deps.ts";

/** Mounted under /api/v1. */
export function authenticationApp(deps: AuthenticationDeps) {
  return createRouter()
    .openapi(codeChallengesRoute, createCodeChallenge(deps))
    .openapi(codeVerificationsRoute, verifyRecoveryCode(deps))
    .openapi(passwordResetsRoute, resetRecoveredPassword(deps));
}
