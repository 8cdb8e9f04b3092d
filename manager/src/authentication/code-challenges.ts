import { z } from "@hono/zod-openapi";
import { localeFromAcceptLanguage, resolveLocale } from "@tjm/platform/locale";
import { ONE_TIME_CODE_DIGITS, ONE_TIME_CODE_TTL_SECONDS } from "../identity/one-time-codes.ts";
import { identifierProblem, RECOVERY_CHANNELS } from "../identity/recovery/index.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { apiRoute, BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import { fieldRefused, rateLimited, requestAddress } from "./answers.ts";
import type { AuthenticationDeps } from "./deps.ts";

export const CodeChallengeBodySchema = z
  .object({
    identifier: z.string().min(1).max(320).openapi({
      description: "The account's e-mail address (EMAIL) or phone number in international form (SMS)",
      example: "ada@example.com",
    }),
    channel: z.enum(RECOVERY_CHANNELS).openapi({
      description: "Where the code goes: EMAIL, or SMS to a verified phone",
      example: "EMAIL",
    }),
    locale: z.string().max(35).optional().openapi({
      description:
        "The language of the message: en, fa, fa-AF (prs) or ps. Accept-Language wins over it; an unknown one is English",
      example: "ps",
    }),
  })
  .openapi("RecoveryCodeChallenge");

export const CodeChallengeAcceptedSchema = z
  .object({
    codeLength: z.number().int().openapi({ example: ONE_TIME_CODE_DIGITS }),
    expiresInSeconds: z.number().int().openapi({ example: ONE_TIME_CODE_TTL_SECONDS }),
  })
  .openapi("RecoveryCodeChallengeAccepted");

const ACCEPTED = { codeLength: ONE_TIME_CODE_DIGITS, expiresInSeconds: ONE_TIME_CODE_TTL_SECONDS };

export const codeChallengesRoute = apiRoute({
  method: "post",
  path: "/authentication/recovery/code-challenges",
  tags: ["authentication"],
  security: [],
  summary: "Ask for a password recovery code",
  operationId: "createRecoveryCodeChallenge",
  description:
    "Step 1 of password recovery (public). Always 202 with the same body, whether or not an account can receive a code at the identifier: when one can (an enabled account's e-mail address, or its verified phone for SMS), a code of 6 digits valid for 10 minutes is sent; a new request voids the previous code. Limited per identifier and per client address (429 with Retry-After), alike for every identifier.",
  request: jsonBody(CodeChallengeBodySchema, {
    identifier: "ada@example.com",
    channel: "EMAIL",
    locale: "ps",
  }),
  responses: {
    202: jsonResponse(
      "The request was taken; a code is on its way if an account can receive it",
      CodeChallengeAcceptedSchema,
      ACCEPTED,
    ),
  },
  errors: [...BODY_ERRORS, "recovery.rate_limited"],
});

export const createCodeChallenge =
  (deps: AuthenticationDeps): AppRouteHandler<typeof codeChallengesRoute> =>
  async (c) => {
    const body = c.req.valid("json");
    const problem = identifierProblem(body.channel, body.identifier);
    if (problem) throw fieldRefused("identifier", problem);
    const outcome = await deps.recovery.requestCode({
      channel: body.channel,
      identifier: body.identifier,
      locale:
        localeFromAcceptLanguage(c.req.header("accept-language")) ??
        (body.locale === undefined ? undefined : resolveLocale(body.locale)),
      address: requestAddress(c, deps.trustedProxies),
    });
    if (outcome.outcome === "rate-limited") throw rateLimited(c, outcome.retryAfterSeconds);
    return c.json(ACCEPTED, 202);
  };
