/**
 * Every error code the Manager's and the Admin console's own routes answer with: the one list,
 * each code with the HTTP status it always comes with and what it means. A code never changes
 * meaning once published; clients branch on it, never on `message`. The provider's /oidc/*
 * endpoints keep RFC 6749's `{error, error_description}` and are not listed here.
 */

export interface ErrorCodeEntry {
  status: number;
  description: string;
  /** Listed ahead of the routes that will answer with it; no route answers it yet. */
  reserved?: true;
}

export const errorCodes = {
  "validation.failed": {
    status: 400,
    description: "The path, query or body is invalid; `details` lists every failure",
  },
  "auth.token_missing": {
    status: 401,
    description: "No bearer token, or an authorization header that is not `Bearer <token>`",
  },
  "auth.token_invalid": {
    status: 401,
    description: "The token is malformed, wrongly signed or from an issuer not trusted here",
  },
  "auth.token_expired": { status: 401, description: "The token has expired" },
  "auth.token_revoked": {
    status: 401,
    description: "The token no longer stands: its session, grant, client or account has ended",
  },
  "auth.session_missing": {
    status: 401,
    description: "Admin console: no signed-in session, or it has ended; sign in again",
  },
  "auth.reauthentication_required": {
    status: 403,
    description:
      "The action needs a sign-in within the last `maxAge` seconds: sign in again with that max_age and retry",
  },
  "auth.audience_missing": { status: 403, description: "The token is valid but not for this audience" },
  "auth.token_refused": {
    status: 403,
    description: "The token is valid but its account may not use this audience (role)",
  },
  "auth.project_forbidden": {
    status: 403,
    description: "The token does not grant the project named in the path",
  },
  "auth.mfa_required": {
    status: 403,
    description:
      "OPERATOR_REQUIRE_MFA: the token's sign-in used no second factor (its amr lacks mfa); sign in again with the acr urn:tjm:acr:mfa asked for as essential",
  },
  "mfa.factor_refused": {
    status: 403,
    description:
      "MFA_OPERATOR_SMS_EMAIL_ALLOWED=false: an account holding the operator role may not enrol an SMS or e-mail factor",
  },
  "request.cross_site": {
    status: 403,
    description: "Admin console: an unsafe request that does not come from the console's own pages",
  },
  "request.json_required": {
    status: 403,
    description: "Admin console: an unsafe request that does not send application/json",
  },
  "enrollment.token_invalid": {
    status: 401,
    description: "The enrollment token is invalid, expired or already used",
  },
  "enrollment.pool_mismatch": { status: 403, description: "The enrollment token is for another Worker pool" },
  "worker.proof_invalid": {
    status: 401,
    description: "The challenge is unknown, expired or used, or its signature does not verify",
  },
  "worker.disabled": { status: 403, description: "The Worker was disabled by an operator; enroll it again" },
  "avatar.not_found": { status: 404, description: "The account has no avatar" },
  "route.not_found": { status: 404, description: "No route has this method and path" },
  "identifier.change_not_found": {
    status: 404,
    description:
      "The account has no pending identifier change with this id (cancelled, replaced by a newer request, already verified, or another account's)",
  },
  "mfa.factor_not_found": {
    status: 404,
    description: "The account has no factor with this id (removed, or another account's)",
  },
  "mfa.enrolment_not_found": {
    status: 404,
    description:
      "The account has no enrolment under way with this id (verified, replaced by a newer start, or another account's)",
  },
  "job.not_found": { status: 404, description: "The job does not exist (or is not the tenant's)" },
  "job.attempt_not_found": { status: 404, description: "The job has no such attempt" },
  "job.log_not_found": { status: 404, description: "The attempt has no log, or it is not in storage" },
  "worker.not_found": { status: 404, description: "The Worker does not exist or is not registered" },
  "session.not_found": {
    status: 404,
    description: "The account has no live session with this id (another account's session answers the same)",
  },
  "client.not_found": {
    status: 404,
    description: "No client has this UUID or client_id (or it was deleted, or it is another account's app)",
  },
  "client.grant_not_found": { status: 404, description: "The client holds no grant for this resource" },
  "client.entry_not_found": {
    status: 404,
    description: "The client's resources, roles, users or directory sources do not hold this key",
  },
  "client.public_without_secret": {
    status: 409,
    description: "A public client has no secret to rotate",
  },
  "session.client_not_found": {
    status: 404,
    description: "The client holds no grant and no session of the account (connected apps)",
  },
  "job.not_cancellable": {
    status: 409,
    description: "The job is COMPLETED or FAILED and can no longer be cancelled",
  },
  "job.not_retryable": { status: 409, description: "The job has not failed, so it cannot be retried" },
  "job.not_resumable": { status: 409, description: "The job is not eligible for resume-uploads" },
  "worker.already_registered": {
    status: 409,
    description: "A Worker with this public key is already registered",
  },
  "worker.pool_mismatch": { status: 409, description: "The Worker is registered in another pool" },
  "worker.instance_superseded": {
    status: 409,
    description: "The Worker instance is no longer current; re-register",
  },
  "worker.not_draining": {
    status: 409,
    description: "The Worker is not draining (or is disabled) and cannot be undrained",
  },
  "identifier.taken": {
    status: 409,
    description: "Another account has this e-mail address (in any spelling) or phone number",
  },
  "identifier.change_expired": {
    status: 409,
    description: "The change's code is past its 10 minutes or its 5 tries are spent: request a new code",
  },
  "mfa.enrolment_expired": {
    status: 409,
    description: "The enrolment is past its 10 minutes or its 5 tries are spent: start again",
  },
  "mfa.factor_exists": {
    status: 409,
    description: "The account has this factor already (one TOTP factor; one factor per phone or address)",
  },
  "mfa.destination_unverified": {
    status: 409,
    description:
      "The account's phone (SMS) or e-mail address is missing or not verified: verify it first (PATCH /api/v1/me/identifiers)",
  },
  "mfa.not_enabled": {
    status: 409,
    description: "The account has no factor, so it has no recovery codes to replace",
  },
  "request.body_too_large": { status: 413, description: "The request body is over the route's size limit" },
  "avatar.too_large": {
    status: 413,
    description: "The avatar is over 2 MiB (contentLength, or the uploaded object)",
  },
  "avatar.too_many_pixels": {
    status: 413,
    description: "The uploaded image has more than 4096 × 4096 pixels; the upload is deleted",
  },
  "request.unsupported_media_type": { status: 415, description: "The request body is not application/json" },
  "avatar.unsupported_type": {
    status: 415,
    description:
      "The avatar is not a PNG, JPEG or WebP image: the declared contentType, or the uploaded bytes (their signature or their decoding); the upload is deleted",
  },
  "avatar.upload_rate_limited": {
    status: 429,
    description: "More than 10 avatar upload URLs in the last hour; retry after the Retry-After delay",
  },
  "account.too_many_attempts": {
    status: 429,
    description:
      "Too many wrong passwords for this account (the sign-in limit); retry after the Retry-After delay",
  },
  "mfa.too_many_codes_sent": {
    status: 429,
    description:
      "MFA_CODE_SENDS_PER_HOUR codes were sent to this phone or address in the last hour; retry after the Retry-After delay",
  },
  "recovery.rate_limited": {
    status: 429,
    description: "Too many password recovery requests; retry after the Retry-After delay",
  },
  "internal.error": {
    status: 500,
    description: "An unexpected failure; the log has it under the request id",
  },
  "dependency.manager_unavailable": { status: 502, description: "Admin console: the Manager did not answer" },
  "dependency.unavailable": {
    status: 503,
    description: "A dependency this answer needs (database, broker, storage) is unavailable",
  },
  "identifier.delivery_unavailable": {
    status: 503,
    description:
      "No transport sends to this channel (EMAIL_TRANSPORT, SMS_TRANSPORT), so no code can be sent",
  },
  "mfa.delivery_unavailable": {
    status: 503,
    description: "No transport sends SMS (SMS_TRANSPORT) or e-mail (EMAIL_TRANSPORT), so no code can be sent",
  },
  "auth.verification_unavailable": {
    status: 503,
    description: "Tokens cannot be verified: the issuer's keys could not be fetched",
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof errorCodes;

/**
 * The codes of `details[]` items in a `validation.failed` 400: one per failure, at its path.
 * `validation.*` follow the schema library's issue codes; the others are rules of their own.
 */
export const detailCodes = {
  "avatar.upload_unknown": {
    description:
      "The avatarUploadId names no upload of this account that can still be claimed (unknown, another account's, claimed or refused already, or older than an hour)",
  },
  "avatar.upload_missing": {
    description: "Nothing has been uploaded to the avatar upload's URL yet; upload, then claim it again",
  },
  "recovery.code_invalid": {
    description:
      "The code is wrong, expired or already used, its challenge has had its tries, or no code was asked for: ask for a new code",
  },
  "recovery.token_invalid": {
    description: "The recovery token is unknown, expired or already used: start the recovery again",
  },
  "validation.required": { description: "A required field is missing" },
  "validation.invalid_type": { description: "The value has the wrong type" },
  "validation.invalid_format": {
    description: "The string does not have the required format (UUID, URI, pattern …)",
  },
  "validation.invalid_value": { description: "The value is not one of the allowed values" },
  "validation.too_small": { description: "The number, string or list is below its minimum" },
  "validation.too_big": { description: "The number, string or list is above its maximum" },
  "validation.not_multiple_of": { description: "The number is not a multiple of the required step" },
  "validation.unrecognized_keys": { description: "The object has fields it does not allow" },
  "validation.invalid_union": { description: "The value matches none of the allowed shapes" },
  "validation.invalid_key": { description: "A key of a record is invalid" },
  "validation.invalid_element": { description: "An element of a map or set is invalid" },
  "validation.custom": { description: "The value breaks a rule of its field (the message says which)" },
  "validation.malformed_json": { description: "The body is not well-formed JSON" },
  "validation.invalid_encoding": {
    description:
      "The JSON body's bytes are not UTF-8 (invalid sequences, overlong forms, encoded surrogates)",
  },
  "validation.lone_surrogate": {
    description:
      "A string (a value, or a key) holds a `\\uD800`–`\\uDFFF` escape without its pair, which names no character",
  },
  "name.invisible": {
    description:
      "The name has no visible character: only spaces and invisible characters (zero-width, format, filler)",
  },
  "name.bidi_override": {
    description:
      "The name holds a bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069), which can make it display as other text",
  },
  "job.requirements_unsatisfiable": { description: "The required capabilities name no Worker pool" },
  "job.project_unknown": { description: "The project does not exist" },
  "worker.public_key_invalid": { description: "The public key is not a valid NKey user key" },
  "password.too_short": { description: "The new password is shorter than 8 characters" },
  "password.too_long": { description: "The new password is longer than 256 characters" },
  "password.too_common": { description: "The new password is among the most common passwords" },
  "password.contains_email": { description: "The new password contains the account's e-mail name" },
  "password.incorrect": { description: "The current password is not the account's password" },
  "identifier.email_invalid": {
    description: "Not an e-mail address an account can have (no @, spaces, control characters, too long)",
  },
  "identifier.phone_invalid": {
    description: "Not a valid phone number in international form (+ and the country code)",
  },
  "identifier.unchanged": { description: "The account already has this identifier, verified" },
  "identifier.code_invalid": { description: "The code is wrong; the message says how many tries are left" },
  "mfa.code_invalid": { description: "The code is wrong; the message says how many tries are left" },
  "client.redirect_uri_invalid": {
    description:
      "A redirect, post-logout redirect or back-channel logout URI is not an absolute URL, is not written as the WHATWG URL parser writes it, has userinfo, a fragment or a `*`, or is neither https nor http on a loopback address",
  },
  "client.grant_type_unknown": { description: "Not a grant type TJM's clients may have" },
  "client.redirect_uri_required": { description: "The authorization_code grant needs a redirect URI" },
  "client.redirect_uri_without_code_grant": {
    description: "Redirect URIs need the authorization_code grant",
  },
  "client.logout_uri_without_code_grant": {
    description: "Post-logout and back-channel logout URIs need the authorization_code grant",
  },
  "client.refresh_without_code_grant": { description: "The refresh_token grant needs authorization_code" },
  "client.resource_unknown": { description: "Not one of TJM's protected resources (audiences)" },
  "client.project_id_invalid": { description: "A project id is not a UUID" },
  "client.project_unknown": { description: "No project has this id" },
  "client.account_unknown": { description: "No account has this id" },
  "developer.scope_not_allowed": {
    description: "A developer app may ask only openid, profile and email",
  },
  "developer.first_party_not_allowed": { description: "A developer app is never first-party" },
  "developer.resource_not_allowed": {
    description: "A developer app gets no TJM resource (operations, tenant, account-portal, admin-console)",
  },
  "developer.client_credentials_not_allowed": {
    description: "A developer app cannot use client_credentials",
  },
  "developer.redirect_uri_not_https": {
    description: "A web developer app's redirect URIs are https only (loopback http is for native apps)",
  },
  "developer.type_unchangeable": { description: "An app's type (confidential or public) cannot change" },
  "developer.limit_reached": { description: "The account already has 10 developer apps; delete one first" },
  "client.projects_need_client_credentials": {
    description: "Projects are bound to client_credentials clients only (tenant tokens)",
  },
  "client.public_client_credentials": {
    description: "A public client has no secret, so it cannot use client_credentials",
  },
  "client.access_token_ttl_out_of_range": {
    description: "The client's access-token lifetime is outside 30..600 seconds",
  },
} as const satisfies Record<string, { description: string; reserved?: true }>;

export type DetailCode = keyof typeof detailCodes;

/** Reason phrases of the statuses above: the `error` of a body. */
export const reasonPhrases: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

/** One failure of a 400, at the dot path of the offending field. */
export interface ErrorDetail {
  path: string;
  message: string;
  code: DetailCode;
}

/** The one error body of the Manager's and the console's own routes. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: ErrorCode;
  requestId: string;
  details?: ErrorDetail[];
  /** With auth.reauthentication_required: the max_age (seconds) to send to the provider. */
  maxAge?: number;
}

export interface ErrorExtras {
  details?: ErrorDetail[] | undefined;
  maxAge?: number | undefined;
}

export function errorBody(
  code: ErrorCode,
  message: string,
  requestId: string,
  extras: ErrorExtras = {},
): ErrorBody {
  const statusCode = errorCodes[code].status;
  const body: ErrorBody = {
    statusCode,
    error: reasonPhrases[statusCode] as string,
    message,
    code,
    requestId,
  };
  if (extras.details) body.details = extras.details;
  if (extras.maxAge !== undefined) body.maxAge = extras.maxAge;
  return body;
}

/** The markdown table docs/api.md carries (a test keeps the two equal). */
export function errorCodeTable(): string {
  const rows = Object.entries(errorCodes).map(
    ([code, entry]: [string, ErrorCodeEntry]) =>
      `| \`${code}\` | ${entry.status} | ${entry.description}${entry.reserved ? " (reserved)" : ""} |`,
  );
  const details = Object.entries(detailCodes).map(
    ([code, entry]: [string, { description: string; reserved?: true }]) =>
      `| \`${code}\` | ${entry.description}${entry.reserved ? " (reserved)" : ""} |`,
  );
  return [
    "| code | status | meaning |",
    "|---|---|---|",
    ...rows,
    "",
    "| `details[].code` | meaning |",
    "|---|---|",
    ...details,
  ].join("\n");
}
