import { z } from "@hono/zod-openapi";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { rotateSecretAudited } from "./errors.ts";
import { REFERENCE } from "./schema.ts";

/** Keycloak's longest "rotated secret" window is the client policy's; TJM's is a week. */
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

export const RotateSecretSchema = z
  .object({
    client: z.string().min(1).max(200).regex(REFERENCE, "must be a client's UUID or client_id").openapi({
      description: "The client's UUID (`id`) or its public `client_id`",
      example: "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31",
    }),
    graceSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_GRACE_SECONDS)
      .default(0)
      .openapi({
        description: `How long the replaced secret keeps authenticating, 0..${MAX_GRACE_SECONDS} (7 days); 0: not at all`,
        example: 3600,
      }),
  })
  .openapi("RotateSecret");

export const RotatedSecretSchema = z
  .object({
    clientId: z.string().openapi({ example: "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31" }),
    clientSecret: z.string().openapi({
      description: "The new secret, shown once (stored only as its HMAC)",
      example: "tjm_cs_Q2h4b3J0LXNlY3JldC1leGFtcGxlLW9ubHktNDMtY2hhcnM",
    }),
    previousSecretExpiresAt: z.iso.datetime().nullable().openapi({
      description: "Until when the replaced secret still authenticates; null: it no longer does",
      example: "2026-11-27T11:00:00.000Z",
    }),
  })
  .openapi("RotatedSecret");

export const rotateSecretRoute = clientAdminRoute({
  method: "post",
  path: "/management/clients/rotate-secret",
  tags: ["clients"],
  summary: "Rotate a confidential client's secret",
  operationId: "rotateClientSecret",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS. The new secret is in the answer once (`Cache-Control: no-store`). During `graceSeconds` both secrets authenticate, then only the new one; a second rotation ends the previous grace at once (one current secret, at most one in grace). A public client has no secret: 409.",
  request: {
    ...jsonBody(RotateSecretSchema, { client: "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31", graceSeconds: 3600 }),
  },
  responses: { 200: jsonResponse("The new secret, shown once", RotatedSecretSchema) },
  errors: [
    ...BODY_ERRORS,
    "client.not_found",
    "client.public_without_secret",
    "auth.reauthentication_required",
  ],
});

export const rotateSecretHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof rotateSecretRoute> =>
  async (c) => {
    const { client: reference, graceSeconds } = c.req.valid("json");
    const admin = c.get("clientAdmin");
    const rotated = await rotateSecretAudited(deps, admin, admin, { reference, graceSeconds });
    c.header("cache-control", "no-store");
    return c.json(rotated, 200);
  };
