/**
 * `POST /operations/token-standings`: whether operators' access tokens still stand, many in one
 * request. For a relay that follows the event stream once for many signed-in users (the Admin
 * console): the Manager ends its own streams whose token stops standing, so a relay sharing one
 * stream asks here, every few seconds, for the users it serves. Each token is judged exactly as
 * a bearer token of an operations route would be; the answer names the reason for each refusal.
 */
import { z } from "@hono/zod-openapi";
import type { JWTPayload } from "jose";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { Standing, StandingQuestion } from "../identity/tokens/standing.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";

/** Per request: verifying a token's signature costs about 0.1 ms of CPU, a hundred 10 ms at most. */
export const MAX_STANDING_TOKENS = 100;
/** Longer than any token TJM's issuer signs (about 1 KiB), short enough to bound the work. */
const MAX_TOKEN_LENGTH = 8192;

export const TokenStandingsBodySchema = z
  .object({
    accessTokens: z
      .array(z.string().min(1).max(MAX_TOKEN_LENGTH))
      .min(1)
      .max(MAX_STANDING_TOKENS)
      .openapi({
        description: `Access tokens for the operations audience, 1 to ${MAX_STANDING_TOKENS}`,
        example: ["eyJhbGciOiJSUzI1NiIsImtpZCI6Ii4uLiJ9.eyJzdWIiOiIuLi4ifQ.c2lnbmF0dXJl"],
      }),
  })
  .openapi("TokenStandingsQuestion");

export const TokenStandingSchema = z
  .object({
    stands: z.boolean().openapi({ description: "Whether an operations route would accept the token now" }),
    status: z
      .union([z.literal(401), z.literal(403)])
      .optional()
      .openapi({
        description: "When it does not stand: the status an operations route would answer",
        example: 401,
      }),
    reason: z.string().optional().openapi({
      description: "When it does not stand: why, in English",
      example: "Token refused: the token's account is disabled",
    }),
  })
  .openapi("TokenStanding");

export const TokenStandingsSchema = z
  .object({
    standings: z.array(TokenStandingSchema).openapi({ description: "One per token, in the order asked" }),
  })
  .openapi("TokenStandings");

export const tokenStandingsRoute = operatorRoute({
  method: "post",
  path: "/token-standings",
  tags: ["events"],
  summary: "Check whether operators' access tokens still stand",
  operationId: "checkTokenStandings",
  description: `For a relay that follows the event stream once for many signed-in operators (the Admin console): whether each token would still be accepted by an operations route (signature, issuer, audience, expiry, account and client standing, operator role), in the order asked, with the reason for each refusal. Up to ${MAX_STANDING_TOKENS} tokens per request; the caller's own bearer token is checked as on any operations route.`,
  request: jsonBody(TokenStandingsBodySchema),
  responses: { 200: jsonResponse("The standing of each token", TokenStandingsSchema) },
  errors: [...BODY_ERRORS, "auth.verification_unavailable"],
});

export interface TokenStandingsDeps {
  /** Signature, issuer and audience of an operations token (createTokenAuth's verify). */
  verify(token: string): Promise<{ claims: JWTPayload; fromTjm: boolean }>;
  standings(questions: readonly StandingQuestion[]): Promise<Standing[]>;
}

type Judged = z.infer<typeof TokenStandingSchema>;

/** A token refused; anything else (an issuer's keys unreachable: 503) fails the whole request. */
const refusal = (error: unknown): Judged => {
  if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 403)) throw error;
  return { stands: false, status: error.status === 403 ? 403 : 401, reason: error.message };
};

export const tokenStandings =
  (deps: TokenStandingsDeps): AppRouteHandler<typeof tokenStandingsRoute> =>
  async (c) => {
    const { accessTokens } = c.req.valid("json");
    const verified = await Promise.all(accessTokens.map((token) => deps.verify(token).catch(refusal)));
    // TJM's tokens are judged in one query; an external operator issuer's stand once verified.
    const asked = verified.flatMap((result) =>
      "claims" in result && result.fromTjm
        ? [{ claims: result.claims, resource: "operations" as const }]
        : [],
    );
    const answers = asked.length > 0 ? await deps.standings(asked) : [];
    let next = 0;
    const standings = verified.map((result): Judged => {
      if (!("claims" in result)) return result;
      if (!result.fromTjm) return { stands: true };
      const standing = answers[next++] as Standing;
      return standing.ok
        ? { stands: true }
        : { stands: false, status: standing.status, reason: `Token refused: ${standing.reason}` };
    });
    return c.json({ standings }, 200);
  };
