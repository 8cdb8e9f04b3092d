import { z } from "@hono/zod-openapi";
import { regenerateRecoveryCodes } from "../identity/factors/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { requireRecentAuthenticationFor } from "../identity/tokens/recent-authentication.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { RECOVERY_CODES_EXAMPLE, RecoveryCodesSchema, requesterOf } from "./mfa-schema.ts";

export const RegeneratedRecoveryCodesSchema = z
  .object({ recoveryCodes: RecoveryCodesSchema })
  .openapi("MfaRecoveryCodes");

export const regenerateRecoveryCodesRoute = accountRoute({
  method: "post",
  path: "/me/security/mfa/recovery-codes/regeneration",
  tags: ["account"],
  summary: "Replace the account's recovery codes",
  operationId: "regenerateMfaRecoveryCodes",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS. Ten new single-use codes replace the whole set (the old ones, used or not, stop working at once); they are answered this once, with Cache-Control: no-store, and stored only as HMAC-SHA-256. 409 `mfa.not_enabled` while the account has no factor.",
  responses: {
    200: jsonResponse("The new codes", RegeneratedRecoveryCodesSchema, {
      recoveryCodes: RECOVERY_CODES_EXAMPLE,
    }),
  },
  errors: ["auth.reauthentication_required", "mfa.not_enabled"],
});

export const regenerateRecoveryCodesHandler =
  (deps: AccountDeps): AppRouteHandler<typeof regenerateRecoveryCodesRoute> =>
  async (c) => {
    const principal = c.get("account");
    await requireRecentAuthenticationFor(
      deps.sql,
      { event: "mfa.recovery-codes-regenerated", details: { accountId: principal.accountId } },
      principal,
      deps.reauthenticationMaxAgeSeconds,
    );
    const outcome = await regenerateRecoveryCodes(
      deps,
      requesterOf(principal, c.req.header("accept-language")),
    );
    if (outcome.outcome === "no-factor") {
      throw new ApiError("mfa.not_enabled", "the account has no second factor, so no recovery codes");
    }
    c.header("cache-control", "no-store");
    return c.json({ recoveryCodes: outcome.codes }, 200);
  };
