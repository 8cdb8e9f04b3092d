import { z } from "@hono/zod-openapi";
import { MAX_PASSWORD_LENGTH } from "../identity/input-bounds.ts";
import { validationError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { apiRoute, BODY_ERRORS, jsonBody } from "../platform/routes.ts";
import { passwordDetails, passwordRefused, rateLimited, requestAddress } from "./answers.ts";
import type { AuthenticationDeps } from "./deps.ts";

export const PasswordResetBodySchema = z
  .object({
    recovery_token: z.string().min(1).max(128).openapi({
      description: "From POST /api/v1/authentication/recovery/code-verifications",
      example: "tjm_rt_Hq3V9yN2xW8pL0sT4uR7eK1mZ6aB5cD3fG9hJ2kL4nP",
    }),
    new_password: z.string().max(MAX_PASSWORD_LENGTH).openapi({
      description:
        "At least 8 characters (code points), at most 256, not among the most common passwords, without the e-mail's name",
      example: "violet tractor umbrella 19",
    }),
    revoke_sessions: z.boolean().openapi({
      description:
        "Also end every session and refresh token of the account and refuse every token issued before the reset",
      example: true,
    }),
  })
  .openapi("RecoveryPasswordReset");

export const passwordResetsRoute = apiRoute({
  method: "post",
  path: "/authentication/recovery/password-resets",
  tags: ["authentication"],
  security: [],
  summary: "Set a new password with a recovery token",
  operationId: "resetPassword",
  description:
    "Step 3 of password recovery (public). 204 once the password is set; the token is spent and the account is told by e-mail. With revoke_sessions every session and refresh token ends and every access token issued before is refused. The reset signs nobody in and leaves the account's factors as they are. A policy refusal answers 400 validation.failed (details at new_password) and leaves the token usable; an unknown, expired or spent token answers 400 validation.failed with recovery.token_invalid at recovery_token, beside the policy's refusals that need no account (too short, too long, too common) at new_password. Limited per client address (429 with Retry-After).",
  request: jsonBody(PasswordResetBodySchema, {
    recovery_token: "tjm_rt_Hq3V9yN2xW8pL0sT4uR7eK1mZ6aB5cD3fG9hJ2kL4nP",
    new_password: "violet tractor umbrella 19",
    revoke_sessions: true,
  }),
  responses: { 204: { description: "The password is set" } },
  errors: [...BODY_ERRORS, "recovery.rate_limited"],
});

export const resetRecoveredPassword =
  (deps: AuthenticationDeps): AppRouteHandler<typeof passwordResetsRoute> =>
  async (c) => {
    const body = c.req.valid("json");
    const outcome = await deps.recovery.resetPassword({
      recoveryToken: body.recovery_token,
      newPassword: body.new_password,
      revokeSessions: body.revoke_sessions,
      address: requestAddress(c, deps.trustedProxies),
      acceptLanguage: c.req.header("accept-language"),
    });
    if (outcome.outcome === "rate-limited") throw rateLimited(c, outcome.retryAfterSeconds);
    if (outcome.outcome === "token-invalid") {
      throw validationError([
        {
          path: "recovery_token",
          message: "The recovery token is not valid: start the recovery again",
          code: "recovery.token_invalid",
        },
        ...passwordDetails(outcome.problems),
      ]);
    }
    if (outcome.outcome === "policy-refused") throw passwordRefused(outcome.problems);
    return c.body(null, 204);
  };
