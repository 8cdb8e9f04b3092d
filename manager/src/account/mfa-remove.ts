import { z } from "@hono/zod-openapi";
import { removeFactor } from "../identity/factors/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { requireRecentAuthenticationFor } from "../identity/tokens/recent-authentication.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { FACTOR_ID_EXAMPLE, requesterOf } from "./mfa-schema.ts";

const FactorIdParamsSchema = z.object({
  factor_id: z.uuid().openapi({ param: { name: "factor_id", in: "path" }, example: FACTOR_ID_EXAMPLE }),
});

const RemovalQuerySchema = z.object({
  revoke_other_sessions: z
    .enum(["true", "false"])
    .default("false")
    .openapi({
      param: { name: "revoke_other_sessions", in: "query" },
      description: "End every other sign-in session of the account too (this token's session stays)",
      example: "false",
    }),
});

export const FactorRemovedSchema = z
  .object({ otherSessionsEnded: z.number().int().openapi({ example: 0 }) })
  .openapi("MfaFactorRemoved");

export const removeFactorRoute = accountRoute({
  method: "delete",
  path: "/me/security/mfa/{factor_id}",
  tags: ["account"],
  summary: "Remove one of the account's second factors",
  operationId: "removeMfaFactor",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS (403 `auth.reauthentication_required` names the `max_age`). Removing the last factor also deletes the recovery codes: the account signs in with its password alone again. The account's e-mail address is told. Another account's factor answers 404 exactly like one that does not exist, and nothing changes.",
  request: { params: FactorIdParamsSchema, query: RemovalQuerySchema },
  responses: { 200: jsonResponse("The factor is removed", FactorRemovedSchema, { otherSessionsEnded: 0 }) },
  errors: ["auth.reauthentication_required", "mfa.factor_not_found"],
});

export const removeFactorHandler =
  (deps: AccountDeps): AppRouteHandler<typeof removeFactorRoute> =>
  async (c) => {
    const principal = c.get("account");
    await requireRecentAuthenticationFor(
      deps.sql,
      { event: "mfa.factor-removed", details: { accountId: principal.accountId } },
      principal,
      deps.reauthenticationMaxAgeSeconds,
    );
    const { factor_id: factorId } = c.req.valid("param");
    const { revoke_other_sessions: revoke } = c.req.valid("query");
    const outcome = await removeFactor(
      { ...deps, ...deps.mfa },
      requesterOf(principal, c.req.header("accept-language")),
      { factorId, revokeOtherSessions: revoke === "true" },
    );
    if (outcome.outcome === "not-found") {
      throw new ApiError("mfa.factor_not_found", "the account has no factor with this id");
    }
    deps.logger.info("mfa factor removed", {
      requestId: c.get("requestId"),
      accountId: principal.accountId,
      factorId,
    });
    return c.json({ otherSessionsEnded: outcome.otherSessionsEnded }, 200);
  };
