/**
 * The named components of the MFA routes (/me/security/mfa…), and what the start and
 * verification routes of the three factor types share: one route per file, built here.
 */
import { z } from "@hono/zod-openapi";
import type {
  EnrolOutcome,
  Factor,
  FactorRequester,
  FactorType,
  StartOutcome,
} from "../identity/factors/index.ts";
import type { AccountPrincipal } from "../identity/tokens/principals.ts";
import { ApiError, validationError } from "../platform/errors.ts";

export const FACTOR_ID_EXAMPLE = "5d1f0c3a-8b7e-4f2d-9a6c-3e4b5a6c7d8e";
export const ENROLMENT_ID_EXAMPLE = "7a2e4c6b-1d3f-4a5b-8c9d-0e1f2a3b4c5d";

export const FactorSchema = z
  .object({
    id: z.uuid().openapi({ example: FACTOR_ID_EXAMPLE }),
    type: z.enum(["totp", "sms", "email"]).openapi({
      description:
        "totp: an authenticator app (RFC 6238). sms and email: a code sent to the account's verified phone or address, lower assurance than TOTP (NIST SP 800-63B restricts SMS)",
      example: "totp",
    }),
    label: z
      .string()
      .openapi({ description: "What the factor is, for people", example: "Authenticator app" }),
    maskedDestination: z.string().nullable().openapi({
      description: "SMS and e-mail: the phone or address the codes go to, mostly hidden; null for TOTP",
      example: null,
    }),
    createdAt: z.iso.datetime().openapi({ example: "2026-11-27T12:00:00.000Z" }),
    lastUsedAt: z.iso.datetime().nullable().openapi({
      description: "The last sign-in it was used for; null: never",
      example: null,
    }),
  })
  .openapi("MfaFactor");

const LABELS: Record<FactorType, string> = {
  totp: "Authenticator app",
  sms: "Codes by SMS",
  email: "Codes by e-mail",
};

export function factorBody(factor: Factor) {
  return {
    id: factor.id,
    type: factor.type,
    label: LABELS[factor.type],
    maskedDestination: factor.maskedDestination,
    createdAt: factor.createdAt.toISOString(),
    lastUsedAt: factor.lastUsedAt?.toISOString() ?? null,
  };
}

export const FACTOR_EXAMPLE = {
  id: FACTOR_ID_EXAMPLE,
  type: "totp" as const,
  label: "Authenticator app",
  maskedDestination: null,
  createdAt: "2026-11-27T12:00:00.000Z",
  lastUsedAt: null,
};

export const RECOVERY_CODES_EXAMPLE = [
  "K7QF-3XWA-9PZT-LM2E-R4VB-HN6C",
  "D2JH-8WQE-5TXK-P3MA-7VLC-ZR9F",
  "Q6NB-4EYT-2KPW-XH7D-M5RA-C8LJ",
  "T3VL-9CQA-6MXE-B2HP-W7KF-N4RD",
  "F8ZP-2LKW-4HRT-Q7EX-C3NB-J6MA",
  "W5EA-7QNK-3XPH-L9DT-R2CF-V8MB",
  "H4MR-6TCJ-8WBQ-2ZNL-E7XK-P3AF",
  "B9XK-3FWP-5NRE-7HTC-Q2LA-M6DV",
  "L2CE-8VRN-4KHB-6QMW-T9XP-A3FJ",
  "R7PW-5BLM-2XFC-9JQE-H4NT-K8VA",
];

export const RecoveryCodesSchema = z.array(z.string()).length(10).openapi({
  description:
    "Ten single-use recovery codes (120 bits each), shown this once: each signs in once in place of a factor. Stored only as HMACs",
  example: RECOVERY_CODES_EXAMPLE,
});

export const EnrolmentVerificationSchema = z
  .object({
    enrolmentId: z.uuid().openapi({
      description: "The enrolment's id, from its start",
      example: ENROLMENT_ID_EXAMPLE,
    }),
    code: z.string().min(1).max(64).openapi({
      description:
        "The 6-digit code (from the authenticator app, or the message sent); Persian and Arabic-Indic digits, spaces and hyphens are accepted",
      example: "493027",
    }),
    revoke_other_sessions: z.boolean().default(false).openapi({
      description:
        "End every other sign-in session of the account once the factor is added (this token's session stays)",
      example: false,
    }),
  })
  .openapi("MfaEnrolmentVerification");

export const FactorEnrolledSchema = z
  .object({
    factor: FactorSchema,
    recoveryCodes: RecoveryCodesSchema.nullable().openapi({
      description:
        "The account's first factor creates its recovery codes: shown here once (Cache-Control: no-store). Null for later factors",
    }),
    otherSessionsEnded: z.number().int().openapi({ example: 0 }),
  })
  .openapi("MfaFactorEnrolled");

export function requesterOf(
  principal: AccountPrincipal,
  acceptLanguage: string | undefined,
): FactorRequester {
  return {
    accountId: principal.accountId,
    clientId: principal.clientId,
    sid: principal.sessionId,
    acceptLanguage,
  };
}

/** The refusal of a start, as the error body says it. */
export function startRefusal(
  type: FactorType,
  outcome: Exclude<StartOutcome, { outcome: "started" }>,
): ApiError {
  switch (outcome.outcome) {
    case "exists":
      return new ApiError(
        "mfa.factor_exists",
        type === "totp"
          ? "the account has a TOTP factor already: remove it first to enrol another authenticator"
          : `the account has a ${type} factor for this ${type === "sms" ? "phone" : "address"} already`,
      );
    case "destination-unverified":
      return new ApiError(
        "mfa.destination_unverified",
        type === "sms"
          ? "the account has no verified phone number: add and verify one first"
          : "the account's e-mail address is not verified: verify it first",
      );
    case "channel-unavailable":
      return new ApiError(
        "mfa.delivery_unavailable",
        `no ${type === "sms" ? "SMS" : "e-mail"} transport is configured`,
      );
    case "too-many-sends":
      return new ApiError(
        "mfa.too_many_codes_sent",
        `too many codes were sent to this ${type === "sms" ? "phone" : "address"} in the last hour: retry in ${outcome.retryAfterSeconds} seconds`,
      );
    case "refused-for-operator":
      return new ApiError(
        "mfa.factor_refused",
        "accounts holding the operator role may enrol only TOTP here (MFA_OPERATOR_SMS_EMAIL_ALLOWED=false)",
      );
    case "unknown-account":
      return new ApiError("auth.token_revoked", "the token's account no longer exists or is disabled");
  }
}

/** The refusal of a verification, as the error body says it. */
export function enrolRefusal(outcome: Exclude<EnrolOutcome, { outcome: "enrolled" }>): ApiError {
  switch (outcome.outcome) {
    case "code-wrong":
      return validationError([
        {
          path: "code",
          message: `the code is wrong; ${outcome.triesLeft} ${outcome.triesLeft === 1 ? "try" : "tries"} left`,
          code: "mfa.code_invalid",
        },
      ]);
    case "not-found":
      return new ApiError("mfa.enrolment_not_found", "the account has no enrolment under way with this id");
    case "expired":
      return new ApiError(
        "mfa.enrolment_expired",
        "this enrolment is past its 10 minutes or its tries are spent: start again",
      );
    case "exists":
      return new ApiError("mfa.factor_exists", "the account has this factor already");
  }
}

export const VERIFICATION_ERRORS = [
  "mfa.enrolment_not_found",
  "mfa.enrolment_expired",
  "mfa.factor_exists",
] as const;
