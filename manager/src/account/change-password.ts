import { z } from "@hono/zod-openapi";
import { createSignInLimiter } from "../identity/accounts/sign-in-limits.ts";
import { passwordProblemText } from "../identity/cli-arguments.ts";
import { readCommonPasswords } from "../identity/common-passwords.ts";
import { MAX_PASSWORD_LENGTH } from "../identity/input-bounds.ts";
import type { PasswordProblem } from "../identity/passwords.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { requireRecentAuthenticationFor } from "../identity/tokens/recent-authentication.ts";
import { ApiError, type DetailCode, validationError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";

export const PasswordChangeSchema = z
  .object({
    current_password: z.string().min(1).max(MAX_PASSWORD_LENGTH).openapi({
      description: "The account's password now; a wrong one counts toward the account's sign-in limit",
      example: "correct horse battery staple",
    }),
    new_password: z.string().min(1).max(MAX_PASSWORD_LENGTH).openapi({
      description:
        "8 to 256 characters (code points, after NFKC), not among the most common passwords, without the e-mail address's name",
      example: "a quiet river of nine lanterns",
    }),
    revoke_other_sessions: z.boolean().default(false).openapi({
      description:
        "End every other sign-in session of the account (their refresh tokens die, their access tokens are refused from the next request, their clients get back-channel logout); the session of this token stays",
      example: true,
    }),
  })
  .openapi("PasswordChange");

export const PasswordChangedSchema = z
  .object({
    otherSessionsEnded: z.number().int().openapi({
      description: "How many other sessions were ended (0 unless revoke_other_sessions)",
      example: 2,
    }),
  })
  .openapi("PasswordChanged");

export const changePasswordRoute = accountRoute({
  method: "post",
  path: "/me/password",
  tags: ["account"],
  summary: "Change the account's password",
  operationId: "changePassword",
  description:
    "Needs a recent sign-in (403 `auth.reauthentication_required` with the `max_age` to sign in again with) and the current password. The new one is checked by the password policy (each broken rule a `details[]` item) before the current one is, so a refused new password spends no try; a wrong current password counts toward the account's sign-in limit, and past it the answer is 429 with Retry-After. The account is told by e-mail, in its locale. Tokens of this session keep working.",
  request: {
    ...jsonBody(PasswordChangeSchema, {
      current_password: "correct horse battery staple",
      new_password: "a quiet river of nine lanterns",
      revoke_other_sessions: true,
    }),
  },
  responses: {
    200: jsonResponse("The password is changed", PasswordChangedSchema, { otherSessionsEnded: 2 }),
  },
  errors: [...BODY_ERRORS, "auth.reauthentication_required", "account.too_many_attempts"],
});

const PROBLEM_CODES: Record<PasswordProblem["code"], DetailCode> = {
  "too-short": "password.too_short",
  "too-long": "password.too_long",
  common: "password.too_common",
  "contains-email": "password.contains_email",
};

/** Read when the first password change asks for it, then kept. */
let commonPasswords: Promise<ReadonlySet<string>> | undefined;

export const changePassword = (deps: AccountDeps): AppRouteHandler<typeof changePasswordRoute> => {
  const limiter = createSignInLimiter(deps.sql, deps.signInLimits);
  return async (c) => {
    const principal = c.get("account");
    await requireRecentAuthenticationFor(
      deps.sql,
      { event: "account.password-changed", details: { via: "portal" } },
      principal,
      deps.reauthenticationMaxAgeSeconds,
    );
    const body = c.req.valid("json");
    commonPasswords ??= readCommonPasswords();
    // Imported here, not at the top: it loads the argon2 addon, which a Deno Manager loads only
    // when it serves a password change (it needs --allow-ffi there).
    const { changeOwnPassword } = await import("../identity/accounts/password.ts");
    const outcome = await changeOwnPassword(
      { ...deps, limiter, commonPasswords: await commonPasswords },
      {
        accountId: principal.accountId,
        clientId: principal.clientId,
        sid: principal.sessionId,
        currentPassword: body.current_password,
        newPassword: body.new_password,
        revokeOtherSessions: body.revoke_other_sessions,
        acceptLanguage: c.req.header("accept-language"),
      },
    );
    switch (outcome.outcome) {
      case "policy-refused":
        throw validationError(
          outcome.problems.map((problem) => ({
            path: "new_password",
            message: passwordProblemText(problem),
            code: PROBLEM_CODES[problem.code],
          })),
        );
      case "current-password-wrong":
        throw validationError([
          { path: "current_password", message: "the current password is wrong", code: "password.incorrect" },
        ]);
      case "too-many-attempts":
        c.header("retry-after", String(outcome.retryAfterSeconds));
        throw new ApiError(
          "account.too_many_attempts",
          `too many wrong passwords for this account: retry in ${outcome.retryAfterSeconds} seconds`,
        );
      case "unknown-account":
        throw new ApiError("auth.token_revoked", "the token's account no longer exists or is disabled");
      case "changed":
        deps.logger.info("password changed", {
          requestId: c.get("requestId"),
          accountId: principal.accountId,
          otherSessionsEnded: outcome.otherSessionsEnded,
        });
        return c.json({ otherSessionsEnded: outcome.otherSessionsEnded }, 200);
    }
  };
};
