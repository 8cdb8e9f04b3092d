/**
 * Recent authentication: actions that take over an account if a token leaks (changing its
 * identifiers, password or factors, deleting it) need a sign-in within the last `maxAgeSeconds`,
 * read from the token's auth_time. The refusal names the max_age the client sends to the
 * provider to get one (RFC 9470's step-up challenge).
 */
import type { Sql } from "../../platform/db.ts";
import { ApiError } from "../../platform/errors.ts";
import { type AuditDetails, type AuditEvent, writeAuditEvent } from "../audit.ts";
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

/**
 * requireRecentAuthentication for a change the audit trail records: a refusal writes the
 * change's failure row (with the reason) before it is answered.
 */
export async function requireRecentAuthenticationFor(
  sql: Sql,
  change: { event: AuditEvent; details?: AuditDetails },
  principal: Pick<AccountPrincipal, "accountId" | "clientId" | "authenticatedAt">,
  maxAgeSeconds: number,
): Promise<void> {
  try {
    requireRecentAuthentication(principal, maxAgeSeconds);
  } catch (error) {
    await writeAuditEvent(sql, {
      event: change.event,
      result: "failure",
      actorAccountId: principal.accountId,
      clientId: principal.clientId,
      details: { ...change.details, reason: "reauthentication required" },
    });
    throw error;
  }
}
