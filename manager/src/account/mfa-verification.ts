/**
 * The verification step of enrolling each factor type: the enrolment its start route began and
 * a first code. The three routes differ only in their type, so they are made by one function.
 */
import { verifyEnrolment } from "../identity/factors/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import {
  ENROLMENT_ID_EXAMPLE,
  EnrolmentVerificationSchema,
  enrolRefusal,
  FACTOR_EXAMPLE,
  FactorEnrolledSchema,
  factorBody,
  RECOVERY_CODES_EXAMPLE,
  requesterOf,
  VERIFICATION_ERRORS,
} from "./mfa-schema.ts";

type FactorType = "totp" | "sms" | "email";

const FIRST_CODE: Record<FactorType, { summary: string; description: string; operationId: string }> = {
  totp: {
    summary: "Finish enrolling a totp factor with a first code from the authenticator app",
    description: "a first code from the authenticator app",
    operationId: "verifyMfaTotp",
  },
  sms: {
    summary: "Finish enrolling a sms factor with the code sent by SMS",
    description: "the code sent by SMS",
    operationId: "verifyMfaSms",
  },
  email: {
    summary: "Finish enrolling a email factor with the code sent by e-mail",
    description: "the code sent by e-mail",
    operationId: "verifyMfaEmail",
  },
};

function verificationRoute(type: FactorType) {
  const { summary, description, operationId } = FIRST_CODE[type];
  return accountRoute({
    method: "post",
    path: `/me/security/mfa/${type}/verification`,
    tags: ["account"],
    summary,
    operationId,
    description: `Verifies ${description} against the enrolment started with POST /api/v1/me/security/mfa/${type} and adds the factor. Each try counts (5 per enrolment, counted before the code is compared, so concurrent tries get no more). The account's first factor creates its 10 recovery codes, answered this once (Cache-Control: no-store). The account's e-mail address is told. \`revoke_other_sessions\` ends every other session of the account.`,
    request: {
      ...jsonBody(EnrolmentVerificationSchema, {
        enrolmentId: ENROLMENT_ID_EXAMPLE,
        code: "493027",
        revoke_other_sessions: false,
      }),
    },
    responses: {
      201: jsonResponse("The factor is added", FactorEnrolledSchema, {
        factor: { ...FACTOR_EXAMPLE, type },
        recoveryCodes: RECOVERY_CODES_EXAMPLE,
        otherSessionsEnded: 0,
      }),
    },
    errors: [...BODY_ERRORS, ...VERIFICATION_ERRORS],
  });
}

export const verifyTotpRoute = verificationRoute("totp");
export const verifySmsRoute = verificationRoute("sms");
export const verifyEmailRoute = verificationRoute("email");

export const verificationHandler =
  (deps: AccountDeps, type: FactorType): AppRouteHandler<ReturnType<typeof verificationRoute>> =>
  async (c) => {
    const principal = c.get("account");
    const body = c.req.valid("json");
    const outcome = await verifyEnrolment(
      { ...deps, ...deps.mfa },
      requesterOf(principal, c.req.header("accept-language")),
      {
        type,
        enrolmentId: body.enrolmentId,
        code: body.code,
        revokeOtherSessions: body.revoke_other_sessions,
      },
    );
    if (outcome.outcome !== "enrolled") throw enrolRefusal(outcome);
    deps.logger.info("mfa factor added", {
      requestId: c.get("requestId"),
      accountId: principal.accountId,
      factorId: outcome.factor.id,
      type,
    });
    c.header("cache-control", "no-store");
    return c.json(
      {
        factor: factorBody(outcome.factor),
        recoveryCodes: outcome.recoveryCodes ?? null,
        otherSessionsEnded: outcome.otherSessionsEnded,
      },
      201,
    );
  };
