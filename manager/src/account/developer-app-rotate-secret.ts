import { z } from "@hono/zod-openapi";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { MAX_GRACE_SECONDS, RotatedSecretSchema } from "../management/client-rotate-secret.ts";
import { rotateSecretAudited } from "../management/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { DeveloperAppParamsSchema } from "./developer-apps-schema.ts";

export const RotateDeveloperAppSecretSchema = z
  .object({
    graceSeconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).default(0).openapi({
      description: "How long the replaced secret keeps authenticating, 0..604800 (7 days)",
      example: 3600,
    }),
  })
  .openapi("RotateDeveloperAppSecret");

export const rotateDeveloperAppSecretRoute = accountRoute({
  method: "post",
  path: "/me/developer-apps/{client}/rotate-secret",
  tags: ["account"],
  summary: "Rotate a developer app's secret",
  operationId: "rotateMyDeveloperAppSecret",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS. The new secret is shown once (`Cache-Control: no-store`); the replaced one authenticates through `graceSeconds`, as in client management. A public app has no secret (409). Another account's app is 404.",
  request: {
    params: DeveloperAppParamsSchema,
    ...jsonBody(RotateDeveloperAppSecretSchema, { graceSeconds: 0 }),
  },
  responses: { 200: jsonResponse("The new secret, shown once", RotatedSecretSchema) },
  errors: [
    ...BODY_ERRORS,
    "client.not_found",
    "client.public_without_secret",
    "auth.reauthentication_required",
  ],
});

export const rotateDeveloperAppSecretHandler =
  (deps: AccountDeps): AppRouteHandler<typeof rotateDeveloperAppSecretRoute> =>
  async (c) => {
    const { client: reference } = c.req.valid("param");
    const { graceSeconds } = c.req.valid("json");
    const account = c.get("account");
    const actor = { accountId: account.accountId, ownClientsOf: account.accountId };
    const rotated = await rotateSecretAudited(deps, actor, account, { reference, graceSeconds });
    c.header("cache-control", "no-store");
    return c.json(rotated, 200);
  };
