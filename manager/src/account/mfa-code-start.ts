/**
 * Starting an SMS or e-mail factor: a code sent to the account's verified phone or address. The
 * two routes differ only in their channel, so they are made by one function.
 */
import { z } from "@hono/zod-openapi";
import { startEnrolment } from "../identity/factors/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { requireRecentAuthenticationFor } from "../identity/tokens/recent-authentication.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { ENROLMENT_ID_EXAMPLE, requesterOf, startRefusal } from "./mfa-schema.ts";

type CodeFactorType = "sms" | "email";

const CHANNEL: Record<
  CodeFactorType,
  { schemaName: string; masked: string; summary: string; operationId: string; sentBy: string; to: string }
> = {
  sms: {
    schemaName: "MfaSmsEnrolment",
    masked: "+98•••••••89",
    summary: "Start enrolling SMS codes as a second factor",
    operationId: "startMfaSms",
    sentBy: "SMS",
    to: "the account's verified phone number",
  },
  email: {
    schemaName: "MfaEmailEnrolment",
    masked: "a•••@example.com",
    summary: "Start enrolling e-mail codes as a second factor",
    operationId: "startMfaEmail",
    sentBy: "e-mail",
    to: "the account's verified e-mail address",
  },
};

const EXPIRES_AT_EXAMPLE = "2026-11-27T12:10:00.000Z";

function enrolmentSchema(type: CodeFactorType) {
  return z
    .object({
      enrolmentId: z.uuid().openapi({ example: ENROLMENT_ID_EXAMPLE }),
      expiresAt: z.iso.datetime().openapi({
        description: "The code works until then (10 minutes, 5 tries)",
        example: EXPIRES_AT_EXAMPLE,
      }),
      maskedDestination: z
        .string()
        .openapi({ description: "Where the code went, mostly hidden", example: CHANNEL[type].masked }),
    })
    .openapi(CHANNEL[type].schemaName);
}

function codeStartRoute(type: CodeFactorType) {
  const channel = CHANNEL[type];
  return accountRoute({
    method: "post",
    path: `/me/security/mfa/${type}`,
    tags: ["account"],
    summary: channel.summary,
    operationId: channel.operationId,
    description: `Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS. Sends a 6-digit code by ${channel.sentBy} to ${channel.to} (409 \`mfa.destination_unverified\` without one); the factor is added once the code is verified with POST /api/v1/me/security/mfa/${type}/verification. Lower assurance than TOTP (NIST SP 800-63B restricts SMS; a mailbox is often guarded by a password alone): its sign-ins carry amr \`${type}\`, and MFA_OPERATOR_SMS_EMAIL_ALLOWED=false refuses it to operators (403 \`mfa.factor_refused\`). At most MFA_CODE_SENDS_PER_HOUR codes go to one destination in an hour (429 \`mfa.too_many_codes_sent\` with Retry-After).`,
    responses: {
      202: jsonResponse("The code is sent", enrolmentSchema(type), {
        enrolmentId: ENROLMENT_ID_EXAMPLE,
        expiresAt: EXPIRES_AT_EXAMPLE,
        maskedDestination: channel.masked,
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
}

export const startSmsRoute = codeStartRoute("sms");
export const startEmailRoute = codeStartRoute("email");

export const codeStartHandler =
  (deps: AccountDeps, type: CodeFactorType): AppRouteHandler<ReturnType<typeof codeStartRoute>> =>
  async (c) => {
    const principal = c.get("account");
    await requireRecentAuthenticationFor(
      deps.sql,
      { event: "mfa.enrolment-started", details: { accountId: principal.accountId, type } },
      principal,
      deps.reauthenticationMaxAgeSeconds,
    );
    const outcome = await startEnrolment(
      { ...deps, ...deps.mfa },
      requesterOf(principal, c.req.header("accept-language")),
      type,
    );
    if (outcome.outcome === "too-many-sends") c.header("retry-after", String(outcome.retryAfterSeconds));
    if (outcome.outcome !== "started") throw startRefusal(type, outcome);
    return c.json(
      {
        enrolmentId: outcome.enrolmentId,
        expiresAt: outcome.expiresAt.toISOString(),
        maskedDestination: outcome.maskedDestination as string,
      },
      202,
    );
  };
