import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { detailCodes, errorBody, errorCodes, errorCodeTable, reasonPhrases } from "./error-codes.ts";

describe("the error code list", () => {
  it("maps each code to its status", () => {
    const statusOf = Object.fromEntries(
      Object.entries(errorCodes).map(([code, entry]) => [code, entry.status]),
    );
    expect(statusOf).toStrictEqual({
      "validation.failed": 400,
      "client.not_found": 404,
      "client.grant_not_found": 404,
      "client.entry_not_found": 404,
      "client.public_without_secret": 409,
      "auth.token_missing": 401,
      "auth.token_invalid": 401,
      "auth.token_expired": 401,
      "auth.token_revoked": 401,
      "auth.session_missing": 401,
      "auth.reauthentication_required": 403,
      "auth.audience_missing": 403,
      "auth.token_refused": 403,
      "auth.project_forbidden": 403,
      "auth.mfa_required": 403,
      "mfa.factor_refused": 403,
      "request.cross_site": 403,
      "request.json_required": 403,
      "enrollment.token_invalid": 401,
      "enrollment.pool_mismatch": 403,
      "worker.proof_invalid": 401,
      "worker.disabled": 403,
      "avatar.not_found": 404,
      "route.not_found": 404,
      "identifier.change_not_found": 404,
      "mfa.factor_not_found": 404,
      "mfa.enrolment_not_found": 404,
      "job.not_found": 404,
      "job.attempt_not_found": 404,
      "job.log_not_found": 404,
      "worker.not_found": 404,
      "session.not_found": 404,
      "session.client_not_found": 404,
      "job.not_cancellable": 409,
      "job.not_retryable": 409,
      "job.not_resumable": 409,
      "worker.already_registered": 409,
      "worker.pool_mismatch": 409,
      "worker.instance_superseded": 409,
      "worker.not_draining": 409,
      "identifier.taken": 409,
      "identifier.change_expired": 409,
      "mfa.enrolment_expired": 409,
      "mfa.factor_exists": 409,
      "mfa.destination_unverified": 409,
      "mfa.not_enabled": 409,
      "request.body_too_large": 413,
      "avatar.too_large": 413,
      "avatar.too_many_pixels": 413,
      "request.unsupported_media_type": 415,
      "avatar.unsupported_type": 415,
      "avatar.upload_rate_limited": 429,
      "account.too_many_attempts": 429,
      "mfa.too_many_codes_sent": 429,
      "recovery.rate_limited": 429,
      "internal.error": 500,
      "dependency.manager_unavailable": 502,
      "dependency.unavailable": 503,
      "identifier.delivery_unavailable": 503,
      "mfa.delivery_unavailable": 503,
      "auth.verification_unavailable": 503,
    });
  });

  it("names codes as dotted lower-case words, each status with a reason phrase", () => {
    for (const code of [...Object.keys(errorCodes), ...Object.keys(detailCodes)]) {
      expect(code).toMatch(/^[a-z]+(\.[a-z_]+)+$/);
    }
    for (const { status } of Object.values(errorCodes))
      expect(reasonPhrases[status]).toEqual(expect.any(String));
  });

  it("builds the body from the code: status and reason phrase follow it", () => {
    expect(errorBody("job.not_cancellable", "Job is COMPLETED", "trace-1")).toStrictEqual({
      statusCode: 409,
      error: "Conflict",
      message: "Job is COMPLETED",
      code: "job.not_cancellable",
      requestId: "trace-1",
    });
  });

  it("is the table docs/api.md shows", () => {
    const page = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
    const section = /<!-- error-codes:start -->\n([\s\S]*?)\n<!-- error-codes:end -->/.exec(page)?.[1];
    expect(section).toBe(errorCodeTable());
  });
});
