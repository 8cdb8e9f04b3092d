/**
 * What the recovery routes share: the client address the limits count, and the one 429. The
 * 429 carries the same message for every identifier; only Retry-After says how long.
 */
import type { Context } from "hono";
import type { PasswordProblem } from "../identity/passwords.ts";
import { clientAddress, socketAddress } from "../platform/client-address.ts";
import { ApiError, type DetailCode, type ErrorDetail, validationError } from "../platform/errors.ts";

/** Counted when the runtime names no socket (an in-process request): one shared budget. */
const NO_ADDRESS = "0.0.0.0";

export function requestAddress(c: Context, trustedProxies: readonly string[]): string {
  return clientAddress(socketAddress(c.env), c.req.header("x-forwarded-for"), trustedProxies) ?? NO_ADDRESS;
}

export function rateLimited(c: Context, retryAfterSeconds: number): ApiError {
  c.header("retry-after", String(retryAfterSeconds));
  return new ApiError(
    "recovery.rate_limited",
    "Too many password recovery requests; retry after the Retry-After delay",
  );
}

const PASSWORD_DETAIL: Record<PasswordProblem["code"], [DetailCode, string]> = {
  "too-short": ["password.too_short", "must be at least 8 characters"],
  "too-long": ["password.too_long", "must be at most 256 characters"],
  common: ["password.too_common", "is among the most common passwords"],
  "contains-email": ["password.contains_email", "must not contain the account's e-mail name"],
};

/** The policy's refusals as details of a 400, each at new_password. */
export function passwordDetails(problems: readonly PasswordProblem[]): ErrorDetail[] {
  return problems.map((problem) => {
    const [code, message] = PASSWORD_DETAIL[problem.code];
    return { path: "new_password", message, code };
  });
}

/** The policy's refusals as the one 400. */
export function passwordRefused(problems: readonly PasswordProblem[]): ApiError {
  return validationError(passwordDetails(problems));
}

/** A field's own rule broken, as the one 400 at its path. */
export function fieldRefused(path: string, message: string): ApiError {
  return validationError([{ path, message, code: "validation.invalid_format" }]);
}
