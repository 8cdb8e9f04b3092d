import { z } from "@hono/zod-openapi";
import { normalizeCode } from "../identity/delivery/index.ts";
import { identifierProblem, RECOVERY_CHANNELS } from "../identity/recovery/index.ts";
import { validationError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { apiRoute, BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import { fieldRefused, rateLimited, requestAddress } from "./answers.ts";
import type { AuthenticationDeps } from "./deps.ts";

export const CodeVerificationBodySchema = z
  .object({
    identifier: z.string().min(1).max(320).openapi({ example: "ada@example.com" }),
    channel: z.enum(RECOVERY_CHANNELS).openapi({ example: "EMAIL" }),
    code: z.string().min(1).max(64).openapi({
      description: "The code received; Persian and Arabic-Indic digits, spaces and hyphens are accepted",
      example: "482915",
    }),
  })
  .openapi("RecoveryCodeVerification");

export const RecoveryTokenSchema = z
  .object({
    recovery_token: z.string().openapi({
      description:
        "Single use, for POST /api/v1/authentication/recovery/password-resets; stored only as its hash",
      example: "tjm_rt_Hq3V9yN2xW8pL0sT4uR7eK1mZ6aB5cD3fG9hJ2kL4nP",
    }),
    expiresInSeconds: z.number().int().openapi({ example: 600 }),
  })
  .openapi("RecoveryToken");

/** Digits only once normalised: the codes TJM sends are 6 digits, a longer one is never right. */
const CODE = /^[0-9]{4,12}$/;

export const codeVerificationsRoute = apiRoute({
  method: "post",
  path: "/authentication/recovery/code-verifications",
  tags: ["authentication"],
  security: [],
  summary: "Exchange a recovery code for a recovery token",
  operationId: "verifyRecoveryCode",
  description:
    "Step 2 of password recovery (public). A right code answers 200 with a recovery token valid for at most 10 minutes, once, bound to the code's challenge. Any other code answers 400 recovery.code_invalid, alike for every identifier. A challenge takes 5 codes at most (concurrent ones included); the codes typed per identifier and per client address are also limited across challenges (429 with Retry-After), so asking for new codes buys no more guesses.",
  request: jsonBody(CodeVerificationBodySchema, {
    identifier: "ada@example.com",
    channel: "EMAIL",
    code: "482915",
  }),
  responses: {
    200: jsonResponse("The recovery token", RecoveryTokenSchema, {
      recovery_token: "tjm_rt_Hq3V9yN2xW8pL0sT4uR7eK1mZ6aB5cD3fG9hJ2kL4nP",
      expiresInSeconds: 600,
    }),
  },
  errors: [...BODY_ERRORS, "recovery.rate_limited"],
});

export const verifyRecoveryCode =
  (deps: AuthenticationDeps): AppRouteHandler<typeof codeVerificationsRoute> =>
  async (c) => {
    const body = c.req.valid("json");
    const problem = identifierProblem(body.channel, body.identifier);
    if (problem) throw fieldRefused("identifier", problem);
    if (!CODE.test(normalizeCode(body.code)))
      throw fieldRefused("code", "must be the digits of the code received");
    const outcome = await deps.recovery.verifyCode({
      channel: body.channel,
      identifier: body.identifier,
      code: body.code,
      address: requestAddress(c, deps.trustedProxies),
    });
    if (outcome.outcome === "rate-limited") throw rateLimited(c, outcome.retryAfterSeconds);
    if (outcome.outcome === "wrong-code") {
      throw validationError([
        {
          path: "code",
          message: "The code is not valid: ask for a new code if it keeps failing",
          code: "recovery.code_invalid",
        },
      ]);
    }
    return c.json({ recovery_token: outcome.recoveryToken, expiresInSeconds: outcome.expiresInSeconds }, 200);
  };
