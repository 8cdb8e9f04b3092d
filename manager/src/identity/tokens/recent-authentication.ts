/**
 * Recent authentication: actions that take over an account if a token leaks (changing its
 * identifiers, password or factors, deleting it) need a sign-in within the last `maxAgeSeconds`,
 * read from the token's auth_time. The refusal names the max_age the client sends to the
 * provider to get one (RFC 9470's step-up challenge).
 */
import { ApiError } from "../../platform/errors.ts";
import type { AccountPrincipal } from "./principals.ts";

export function requireRecentAuthentication(
  principal: Pick<AccountPrincipal, "authenticatedAt">,
  maxAgeSeconds: number,
  nowMs: number = Date.now(),
): void {
  const { authenticatedAt } = principal;
  if (authenticatedAt === undefined) {
    throw new ApiError(
      "auth.reauthentication_required",
      `This action needs a sign-in within the last ${maxAgeSeconds} seconds and the token does not say when its sign-in was: sign in again with max_age=${maxAgeSeconds}`,
      undefined,
      { maxAge: maxAgeSeconds },
    );
  }
  const ageSeconds = Math.floor(nowMs / 1000) - authenticatedAt;
  if (ageSeconds > maxAgeSeconds) {
    throw new ApiError(
      "auth.reauthentication_required",
      `This action needs a sign-in within the last ${maxAgeSeconds} seconds; this token's was ${ageSeconds} seconds ago: sign in again with max_age=${maxAgeSeconds}`,
      undefined,
      { maxAge: maxAgeSeconds },
    );
  }
}
