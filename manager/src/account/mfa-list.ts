import { z } from "@hono/zod-openapi";
import { listFactors } from "../identity/factors/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { FACTOR_EXAMPLE, FactorSchema, factorBody } from "./mfa-schema.ts";

export const FactorListSchema = z.object({ factors: z.array(FactorSchema) }).openapi("MfaFactorList");

export const listFactorsRoute = accountRoute({
  method: "get",
  path: "/me/security/mfa",
  tags: ["account"],
  summary: "List the account's second factors of sign-in",
  operationId: "listMfaFactors",
  description:
    "The account's factors, oldest first: id, type, label, the masked phone or address of SMS and e-mail factors, when each was added and last used. Secrets and destinations are never answered in full. How many recovery codes remain is in GET /api/v1/me (`mfa.recoveryCodesRemaining`).",
  responses: { 200: jsonResponse("The factors", FactorListSchema, { factors: [FACTOR_EXAMPLE] }) },
  errors: [],
});

export const listFactorsHandler =
  (deps: AccountDeps): AppRouteHandler<typeof listFactorsRoute> =>
  async (c) => {
    c.header("cache-control", "no-store");
    const factors = await listFactors(deps.sql, c.get("account").accountId);
    return c.json({ factors: factors.map(factorBody) }, 200);
  };
