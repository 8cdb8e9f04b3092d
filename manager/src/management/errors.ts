/**
 * The domain's refusals as API errors, one mapping shared by every route of the room (and the
 * developer-app routes of the account portal, the same domain).
 */
import {
  auditRefusedClientChange,
  type ClientActor,
  ClientNotFoundError,
  GrantNotFoundError,
  PublicClientError,
  rotateClientSecret,
  UnknownProjectError,
} from "../identity/clients/index.ts";
import type { AccountPrincipal } from "../identity/tokens/principals.ts";
import { requireRecentAuthentication } from "../identity/tokens/recent-authentication.ts";
import type { Sql } from "../platform/db.ts";
import { ApiError } from "../platform/errors.ts";

/** The ApiError a domain refusal answers with; other errors are returned as they are. */
export function clientApiError(err: unknown): unknown {
  if (err instanceof ClientNotFoundError) return new ApiError("client.not_found", "no such client");
  if (err instanceof GrantNotFoundError) {
    return new ApiError("client.grant_not_found", "the client holds no grant for this resource");
  }
  if (err instanceof PublicClientError) {
    return new ApiError("client.public_without_secret", "a public client has no secret to rotate");
  }
  if (err instanceof UnknownProjectError) {
    return new ApiError("validation.failed", "Validation failed", [
      { path: "projectIds", message: err.message, code: "client.project_unknown" },
    ]);
  }
  return err;
}

type ClientChangeEvent = Parameters<typeof auditRefusedClientChange>[1];

/**
 * Runs a change; a refusal (an ApiError, or a domain refusal mapped to one) writes its audit
 * row, naming the actor, the client as the request named it and the refusal's code, and is
 * rethrown. Successes write theirs in the change's own transaction.
 */
export async function auditedChange<T>(
  sql: Sql,
  event: ClientChangeEvent,
  actor: ClientActor,
  reference: string | undefined,
  change: () => Promise<T>,
): Promise<T> {
  try {
    return await change();
  } catch (err) {
    const refusal = clientApiError(err);
    if (refusal instanceof ApiError) {
      await auditRefusedClientChange(sql, event, actor, reference, refusal.code);
    }
    throw refusal;
  }
}

/**
 * A secret rotation as both its routes make it (client management, developer apps): audited,
 * after a recent sign-in, the new secret answered once.
 */
export async function rotateSecretAudited(
  deps: { sql: Sql; clientSecretKey: string | undefined; reauthenticationMaxAgeSeconds: number },
  actor: ClientActor,
  signedIn: Pick<AccountPrincipal, "authenticatedAt">,
  rotation: { reference: string; graceSeconds: number },
) {
  const rotated = await auditedChange(
    deps.sql,
    "client.secret-rotated",
    actor,
    rotation.reference,
    async () => {
      requireRecentAuthentication(signedIn, deps.reauthenticationMaxAgeSeconds);
      if (deps.clientSecretKey === undefined)
        throw new Error("rotating a secret needs CLIENT_SECRET_HMAC_KEY");
      return rotateClientSecret(
        deps.sql,
        actor,
        rotation.reference,
        rotation.graceSeconds,
        deps.clientSecretKey,
      );
    },
  );
  return {
    clientId: rotated.clientId,
    clientSecret: rotated.clientSecret,
    previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
  };
}
