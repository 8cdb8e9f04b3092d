/**
 * Named components of the account portal's sessions, remembered accounts and connected apps
 * routes, and the portal principal's current session, which several of them need.
 */

import { z } from "@hono/zod-openapi";
import { sessionUidOf } from "../identity/sessions/index.ts";
import type { AccountPrincipal } from "../identity/tokens/principals.ts";
import { REFERENCE } from "../management/schema.ts";
import type { Sql } from "../platform/db.ts";
import { ApiError } from "../platform/errors.ts";

const SESSION_ID_EXAMPLE = "kT3qG2vQy1bX9rLmN8dPw";
const CLIENT_ID_EXAMPLE = "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31";

export const SessionClientSchema = z
  .object({
    clientId: z.string().openapi({ description: "The client's public id", example: CLIENT_ID_EXAMPLE }),
    name: z.string().nullable().openapi({
      description: "The client's name; null for a client deleted since",
      example: "Admin console",
    }),
  })
  .openapi("SessionClient");

export const AccountSessionSchema = z
  .object({
    id: z.string().openapi({
      description: "The session's uid (never its cookie value): what DELETE /api/v1/me/sessions/{id} takes",
      example: SESSION_ID_EXAMPLE,
    }),
    current: z.boolean().openapi({ description: "The session of the token that asked", example: true }),
    createdAt: z.iso
      .datetime()
      .nullable()
      .openapi({ description: "When the account signed in", example: "2026-11-27T09:12:03.000Z" }),
    lastUsedAt: z.iso.datetime().nullable().openapi({
      description: "Its latest sign-in, authorization or token refresh",
      example: "2026-11-27T11:40:19.000Z",
    }),
    expiresAt: z.iso
      .datetime()
      .nullable()
      .openapi({ description: "When it ends unless used", example: "2026-12-11T09:12:03.000Z" }),
    clientAddress: z.string().nullable().openapi({
      description: "The browser's address at its latest authorization; null when not recorded",
      example: "203.0.113.7",
    }),
    userAgent: z.string().nullable().openapi({
      description: "The browser's User-Agent at its latest authorization (at most 512 characters)",
      example: "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0",
    }),
    clients: z
      .array(SessionClientSchema)
      .openapi({ description: "The clients the account signed in to through it" }),
  })
  .openapi("AccountSession");

export const SessionIdParamsSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(128)
    .regex(REFERENCE, "must be visible ASCII characters")
    .openapi({
      param: { name: "id", in: "path" },
      description: "The session's id (uid)",
      example: SESSION_ID_EXAMPLE,
    }),
});

export const ClientIdParamsSchema = z.object({
  client_id: z
    .string()
    .min(1)
    .max(255)
    .regex(REFERENCE, "must be visible ASCII characters")
    .openapi({
      param: { name: "client_id", in: "path" },
      description: "The client's public id",
      example: CLIENT_ID_EXAMPLE,
    }),
});

export const SessionsEndedSchema = z
  .object({
    sessionsEnded: z.int().openapi({ description: "Sessions ended", example: 2 }),
    backchannelLogoutsQueued: z.int().openapi({
      description:
        "Back-channel logouts queued, one per client with a back-channel logout URI that had a sid in an ended session; sent after the answer, with retries",
      example: 3,
    }),
  })
  .openapi("SessionsEnded");

/** Where a remembered account's avatar is read (read-remembered-avatar.ts). */
export const rememberedAvatarPath = (accountId: string) => `/api/v1/me/accounts/${accountId}/avatar`;

export const RememberedAccountSchema = z
  .object({
    id: z
      .uuid()
      .openapi({ description: "The account's id", example: "3b241101-e2bb-4255-8caf-4136c566a962" }),
    name: z.string().openapi({ description: "Its display name", example: "Ada Lovelace" }),
    email: z.string().openapi({ description: "Its e-mail address", example: "ada@example.com" }),
    avatarUrl: z.string().nullable().openapi({
      description:
        "Path of its avatar on this API (GET /api/v1/me/accounts/{accountId}/avatar, read with the token that listed it), versioned so it changes with the avatar; null: none",
      example:
        "/api/v1/me/accounts/3b241101-e2bb-4255-8caf-4136c566a962/avatar?v=0d6c2f7e-1b9a-4f3e-8c2d-5a7b9e1f3c4d",
    }),
    signedIn: z
      .boolean()
      .openapi({ description: "Its session in this browser is still live", example: true }),
    current: z.boolean().openapi({ description: "The account of the token that asked", example: true }),
  })
  .openapi("RememberedAccount");

export const ConnectedAppSchema = z
  .object({
    clientId: z.string().openapi({ description: "The client's public id", example: CLIENT_ID_EXAMPLE }),
    name: z.string().nullable().openapi({
      description: "The client's name; null for a client deleted since",
      example: "Reporting dashboard",
    }),
    scopes: z
      .array(z.string())
      .openapi({ description: "OpenID scopes granted", example: ["openid", "email"] }),
    resources: z
      .array(
        z.object({
          resource: z
            .string()
            .openapi({ description: "The resource indicator", example: "urn:tjm:account-portal" }),
          scopes: z.array(z.string()).openapi({ description: "Scopes granted there", example: ["access"] }),
        }),
      )
      .openapi({ description: "Resources (RFC 8707) granted, with their scopes" }),
    firstUsedAt: z.iso
      .datetime()
      .nullable()
      .openapi({ description: "When the earliest live grant was made", example: "2026-10-02T08:00:00.000Z" }),
    lastUsedAt: z.iso.datetime().nullable().openapi({
      description: "The latest issuance under its grants: a grant, an authorization code or a token refresh",
      example: "2026-11-27T11:40:19.000Z",
    }),
  })
  .openapi("ConnectedApp");

export function isoOrNull(date: Date | undefined): string | null {
  return date === undefined ? null : date.toISOString();
}

/**
 * The uid of the session the portal token came from. The standing check refused the token had
 * its session ended; one ended since (a race) is refused the same way.
 */
export async function currentSessionUid(sql: Sql, principal: AccountPrincipal): Promise<string> {
  const uid = await sessionUidOf(sql, principal.accountId, principal.sessionId);
  if (uid === undefined) {
    throw new ApiError("auth.token_revoked", "the sign-in session of the token has ended; sign in again");
  }
  return uid;
}
