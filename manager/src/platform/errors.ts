import { z } from "@hono/zod-openapi";
import type { Logger } from "@tjm/platform";
import {
  type DetailCode,
  detailCodes,
  type ErrorBody,
  type ErrorCode,
  type ErrorDetail,
  errorBody,
  errorCodes,
  reasonPhrases,
} from "@tjm/platform/error-codes";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export type { DetailCode, ErrorBody, ErrorCode, ErrorDetail };

/** An answer other than success: its code decides the status; the handler adds the request id. */
export class ApiError extends HTTPException {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  /** With auth.reauthentication_required: the max_age (seconds) the client sends to the provider. */
  readonly maxAge: number | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], extras: { maxAge?: number } = {}) {
    super(errorCodes[code].status as ContentfulStatusCode, { message });
    this.code = code;
    this.details = details;
    this.maxAge = extras.maxAge;
  }

  body(requestId: string): ErrorBody {
    return errorBody(this.code, this.message, requestId, { details: this.details, maxAge: this.maxAge });
  }
}

/** The one shape of a 400: every detected failure, each at its dot path with its code. */
export function validationError(details: ErrorDetail[]): ApiError {
  return new ApiError("validation.failed", "Validation failed", details);
}

export const routeNotFound = (c: Context) =>
  answerError(c, new ApiError("route.not_found", `No route ${c.req.method} ${c.req.path}`));

/** zod issue paths become dot paths: ["outputs", 1, "video"] -> "outputs.1.video". */
export function dotPath(path: readonly PropertyKey[]): string {
  return path.map((segment) => String(segment)).join(".");
}

/**
 * The detail code of a zod issue: its own code, but `validation.required` for a field absent
 * from `input` (what was validated; zod's issues do not keep the value), and a refinement's own
 * rule where it names one (`params.detailCode`).
 */
export function issueCode(
  issue: { code: string; path: readonly PropertyKey[]; params?: Record<string, unknown> },
  input: unknown,
): DetailCode {
  if (issue.code === "invalid_type" && valueAt(input, issue.path) === undefined) return "validation.required";
  const ruled = issue.code === "custom" ? issue.params?.detailCode : undefined;
  if (typeof ruled === "string" && ruled in detailCodes) return ruled as DetailCode;
  const code = `validation.${issue.code}`;
  return code in detailCodes ? (code as DetailCode) : "validation.custom";
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/** The error body of any answer, with the request id the x-request-id header carries. */
export function answerError(c: Context, error: ApiError, headers: Record<string, string> = {}): Response {
  // An app without the requestId middleware (the provider's pages) names one here. Passed to
  // c.json, not c.header: after a handler finished (limitBody's late 413) there is no response to set it on.
  const requestId = (c.get("requestId") as string | undefined) ?? crypto.randomUUID();
  return c.json(error.body(requestId), error.status, { ...headers, "x-request-id": requestId });
}

const requestIdSchema = z.string().openapi({
  description: "The request's id, as in the x-request-id response header; the log names the failure under it",
  example: "5f0c2a9e-3d4b-4f6a-9c1e-7b8d2e4f6a10",
});

const DetailSchema = z
  .object({
    path: z.string().openapi({ example: "executionPlan.outputs.1.video.height" }),
    message: z.string().openapi({ example: "height must be an even number" }),
    code: z
      .enum(Object.keys(detailCodes) as [DetailCode, ...DetailCode[]])
      .openapi({ example: "validation.custom" }),
  })
  .openapi("ErrorDetail");

/** Every error body; a route's response narrows `code` to the codes it answers with. */
export const ErrorBodySchema = z
  .object({
    statusCode: z.number().int().openapi({ example: 404 }),
    error: z.string().openapi({ example: "Not Found" }),
    message: z.string().openapi({ example: "Job 0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d does not exist" }),
    code: z.enum(Object.keys(errorCodes) as [ErrorCode, ...ErrorCode[]]).openapi({
      description: "What failed, stable: branch on it, never on message",
      example: "job.not_found",
    }),
    requestId: requestIdSchema,
    maxAge: z.number().int().optional().openapi({
      description:
        "With `auth.reauthentication_required`: sign in again sending this `max_age` (seconds) to the provider, then retry",
      example: 300,
    }),
  })
  .openapi("Error");

export const ValidationErrorBodySchema = ErrorBodySchema.extend({
  statusCode: z.literal(400),
  error: z.literal("Bad Request"),
  code: z.literal("validation.failed"),
  details: z
    .array(DetailSchema)
    .openapi({ description: "Every detected failure, each at the dot path of the offending field." }),
}).openapi("ValidationError");

/** The body of the errors of one status on one route: `code` is one of `codes`. */
function errorBodySchema(status: number, codes: readonly ErrorCode[]) {
  if (status === 400) return ValidationErrorBodySchema;
  return ErrorBodySchema.extend({
    statusCode: z.literal(status),
    error: z.literal(reasonPhrases[status] as string),
    code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
  });
}

const exampleMessages: Partial<Record<ErrorCode, string>> = {
  "validation.failed": "Validation failed",
  "auth.token_invalid": "Invalid bearer token: signature verification failed",
  "auth.audience_missing": "Token audience does not include tjm-operations",
  "job.not_found": "Job 0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d does not exist",
  "job.not_cancellable": "Job is COMPLETED and can no longer be cancelled",
  "request.body_too_large": "Request body exceeds 1048576 bytes",
  "request.unsupported_media_type": "Unsupported Media Type",
  "internal.error": "Internal error (request id 5f0c2a9e-3d4b-4f6a-9c1e-7b8d2e4f6a10)",
};

function example(status: number, code: ErrorCode) {
  const body = errorBody(
    code,
    exampleMessages[code] ?? errorCodes[code].description,
    "5f0c2a9e-3d4b-4f6a-9c1e-7b8d2e4f6a10",
  );
  return status === 400
    ? {
        ...body,
        details: [
          {
            path: "executionPlan.outputs.1.video.height",
            message: "height must be an even number",
            code: "validation.custom",
          },
        ],
      }
    : body;
}

interface ErrorResponseConfig {
  description: string;
  content: { "application/json": { schema: z.ZodType; example: unknown } };
}

/**
 * The error responses of a route, one per status, each listing the codes the route answers
 * with at that status (an enum on `code`), so the document and the SDK know them.
 */
export function errorResponses(...codes: ErrorCode[]): Record<number, ErrorResponseConfig> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = errorCodes[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, ErrorResponseConfig> = {};
  for (const [status, listed] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: listed.map((code) => `\`${code}\`: ${errorCodes[code].description}.`).join(" "),
      content: {
        "application/json": {
          schema: errorBodySchema(status, listed),
          example: example(status, listed[0] as ErrorCode),
        },
      },
    };
  }
  return responses;
}

/**
 * The app's one error handler. Known errors answer with their body; anything else is a 500
 * that says only "internal error" and the request id, and is logged in full.
 */
export function createErrorHandler(logger: Logger) {
  return (err: Error, c: Context) => {
    if (err instanceof ApiError) {
      // RFC 6750 §3: a 401 on a bearer-protected resource names the scheme.
      if (err.status === 401) c.header("www-authenticate", 'Bearer realm="tjm", error="invalid_token"');
      // RFC 9470 §3: the step-up challenge names the max_age a new sign-in must satisfy.
      if (err.maxAge !== undefined) {
        c.header(
          "www-authenticate",
          `Bearer realm="tjm", error="insufficient_user_authentication", max_age=${err.maxAge}`,
        );
      }
      return answerError(c, err);
    }
    if (err instanceof HTTPException && err.status === 400) {
      // Raised by the body parser before validation, e.g. malformed JSON.
      return answerError(
        c,
        validationError([{ path: "body", message: err.message, code: "validation.malformed_json" }]),
      );
    }
    if (err instanceof HTTPException && err.status === 415) {
      return answerError(c, new ApiError("request.unsupported_media_type", err.message));
    }
    const requestId = c.get("requestId");
    logger.error("unhandled error", { requestId, method: c.req.method, path: c.req.path, err });
    return answerError(c, new ApiError("internal.error", `Internal error (request id ${requestId})`));
  };
}
