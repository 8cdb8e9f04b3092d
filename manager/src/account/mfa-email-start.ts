import { z } from "@hono/zod-openapi";
import { startEnrolment } from "../identity/factors/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { requireRecentAuthenticationFor } from "../identity/tokens/recent-authentication.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { ENROLMENT_ID_EXAMPLE, requesterOf, startRefusal } from "./mfa-schema.ts";

export const EmailEnrolmentSchema = z
  .object({
    enrolmentId: z.uuid().openapi({ example: ENROLMENT_ID_EXAMPLE }),
    expiresAt: z.iso.datetime().openapi({
      description: "The code works until then (10 minutes, 5 tries)",
      example: "2026-11-27T12:10:00.000Z",
    }),
    maskedDestination: z
      .string()
      .openapi({ description: "Where the code went, mostly hidden", example: "a•••@example.com" }),
  })
  .openapi("MfaEmailEnrolment");

export const startEmailRoute = accountRoute({
  method: "post",
  path: "/me/security/mfa/email",
  tags: ["account"],
  summary: "Start enrolling e-mail codes as a second factor",
  operationId: "startMfaEmail",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS. Sends a 6-digit code by e-mail to the account's verified e-mail address (409 `mfa.destination_unverified` without one); the factor is added once the code is verified with POST /api/v1/me/security/mfa/email/verification. Lower assurance than TOTP (NIST SP 800-63B restricts SMS; a mailbox is often guarded by a password alone): its sign-ins carry amr `email`, and MFA_OPERATOR_SMS_EMAIL_ALLOWED=false refuses it to operators (403 `mfa.factor_refused`). At most MFA_CODE_SENDS_PER_HOUR codes go to one destination in an hour (429 `mfa.too_many_codes_sent` with Retry-After).",
  responses: {
    202: jsonResponse("The code is sent", EmailEnrolmentSchema, {
      enrolmentId: ENROLMENT_ID_EXAMPLE,
      expiresAt: "2026-11-27T12:10:00.000Z",
      maskedDestination: "a•••@example.com",
    }),
  },
  errors: [
    "auth.reauthentication_required",
    "mfa.factor_exists",
    "mfa.destination_unverified",
    "mfa.factor_refused",
    "mfa.too_many_codes_sent",
    "mfa.delivery_unavailable",
  ],
});

export const startEmailHandler =
  (deps: AccountDeps): AppRouteHandler<typeof startEmailRoute> =>
  async (c) => {
    const principal = c.get("account");
    await requireRecentAuthenticationFor(
      deps.sql,
      { event: "mfa.enrolment-started", details: { accountId: principal.accountId, type: "email" } },
      principal,
      deps.reauthenticationMaxAgeSeconds,
    );
    const outcome = await startEnrolment(
      { ...deps, ...deps.mfa },
      requesterOf(principal, c.req.header("accept-language")),
      "email",
    );
    if (outcome.outcome === "too-many-sends") c.header("retry-after", String(outcome.retryAfterSeconds));
    if (outcome.outcome !== "started") throw startRefusal("email", outcome);
    return c.json(
      {
        enrolmentId: outcome.enrolmentId,
        expiresAt: outcome.expiresAt.toISOString(),
        maskedDestination: outcome.maskedDestination as string,
      },
      202,
    );
  };
