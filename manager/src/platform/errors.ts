import { z } from "@hono/zod-openapi";
import type { Logger } from "@tjm/platform";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Every error the API answers with, and the HTTP status it maps to. */
export const errorStatus = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof errorStatus;

const reasonPhrase: Record<ErrorCode, string> = {
  BAD_REQUEST: "Bad Request",
  UNAUTHORIZED: "Unauthorized",
  FORBIDDEN: "Forbidden",
  NOT_FOUND: "Not Found",
  CONFLICT: "Conflict",
  PAYLOAD_TOO_LARGE: "Payload Too Large",
  UNSUPPORTED_MEDIA_TYPE: "Unsupported Media Type",
  INTERNAL: "Internal Server Error",
  SERVICE_UNAVAILABLE: "Service Unavailable",
};

export interface ValidationDetail {
  path: string;
  message: string;
}

export class ApiError extends HTTPException {
  readonly code: ErrorCode;
  readonly details: ValidationDetail[] | undefined;

  constructor(code: ErrorCode, message: string, details?: ValidationDetail[]) {
    super(errorStatus[code], { message });
    this.code = code;
    this.details = details;
  }

  body(): ErrorBody & { details?: ValidationDetail[] } {
    const base = {
      statusCode: errorStatus[this.code],
      error: reasonPhrase[this.code],
      message: this.message,
    };
    return this.details ? { ...base, details: this.details } : base;
  }
}

/** The one shape of a 400: every detected failure, each at its dot path. */
export function validationError(details: ValidationDetail[]): ApiError {
  return new ApiError("BAD_REQUEST", "Validation failed", details);
}

export const notFound = (message: string) => new ApiError("NOT_FOUND", message);
export const conflict = (message: string) => new ApiError("CONFLICT", message);

/** zod issue paths become dot paths: ["outputs", 1, "video"] -> "outputs.1.video". */
export function dotPath(path: readonly PropertyKey[]): string {
  return path.map((segment) => String(segment)).join(".");
}

export const ErrorBodySchema = z
  .object({
    statusCode: z.number().int().openapi({ example: 404 }),
    error: z.string().openapi({ example: "Not Found" }),
    message: z.string().openapi({ example: "Job 0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d does not exist" }),
  })
  .openapi("Error");

export const ValidationErrorBodySchema = z
  .object({
    statusCode: z.literal(400),
    error: z.literal("Bad Request"),
    message: z.string().openapi({ example: "Validation failed" }),
    details: z
      .array(
        z.object({
          path: z.string().openapi({ example: "executionPlan.outputs.1.video.height" }),
          message: z.string().openapi({ example: "height must be an even number" }),
        }),
      )
      .openapi({ description: "Every detected failure, each at the dot path of the offending field." }),
  })
  .openapi("ValidationError");

export type ErrorBody = z.infer<typeof ErrorBodySchema>;
export type ValidationErrorBody = z.infer<typeof ValidationErrorBodySchema>;

const errorExamples: Record<Exclude<ErrorCode, "BAD_REQUEST">, { description: string; message: string }> = {
  UNAUTHORIZED: {
    description: "Missing, malformed, expired or wrongly signed bearer token",
    message: "Invalid bearer token: signature verification failed",
  },
  FORBIDDEN: {
    description: "The token lacks the operations audience",
    message: "Token audience does not include tjm-operations",
  },
  NOT_FOUND: {
    description: "No such resource",
    message: "Job 0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d does not exist",
  },
  CONFLICT: {
    description: "The resource is not in a state that allows this",
    message: "Job is COMPLETED and can no longer be cancelled",
  },
  PAYLOAD_TOO_LARGE: {
    description: "Request body over the size limit",
    message: "Request body exceeds 1048576 bytes",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    description: "The body is not application/json",
    message: "Unsupported Media Type",
  },
  INTERNAL: {
    description: "Unexpected persistence or dependency failure",
    message: "Internal error (request id 5f0c…)",
  },
  SERVICE_UNAVAILABLE: {
    description: "A dependency needed to answer is unavailable",
    message: "Token verification is unavailable",
  },
};

const validationExample = {
  statusCode: 400,
  error: "Bad Request",
  message: "Validation failed",
  details: [{ path: "executionPlan.outputs.1.video.height", message: "height must be an even number" }],
};

interface ErrorResponseConfig {
  description: string;
  content: {
    "application/json": {
      schema: typeof ErrorBodySchema | typeof ValidationErrorBodySchema;
      example: unknown;
    };
  };
}

/** Named error responses, spread into every route so the document and the SDK know them. */
export function errorResponses(...codes: ErrorCode[]): Record<number, ErrorResponseConfig> {
  const responses: Record<number, ErrorResponseConfig> = {};
  for (const code of codes) {
    const status = errorStatus[code];
    responses[status] =
      code === "BAD_REQUEST"
        ? {
            description: "Invalid path, query or body; every failure is listed in details",
            content: {
              "application/json": { schema: ValidationErrorBodySchema, example: validationExample },
            },
          }
        : {
            description: errorExamples[code].description,
            content: {
              "application/json": {
                schema: ErrorBodySchema,
                example: {
                  statusCode: status,
                  error: reasonPhrase[code],
                  message: errorExamples[code].message,
                },
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
      if (err.code === "UNAUTHORIZED")
        c.header("www-authenticate", 'Bearer realm="tjm", error="invalid_token"');
      return c.json(err.body(), err.status);
    }
    if (err instanceof HTTPException && err.status === 400) {
      // Raised by the body parser before validation, e.g. malformed JSON.
      return c.json(validationError([{ path: "body", message: err.message }]).body(), 400);
    }
    if (err instanceof HTTPException && err.status < 500) {
      const code = (Object.keys(errorStatus) as ErrorCode[]).find((k) => errorStatus[k] === err.status);
      const error = code ? reasonPhrase[code] : "Error";
      return c.json({ statusCode: err.status, error, message: err.message }, err.status);
    }
    const requestId = c.get("requestId");
    logger.error("unhandled error", { requestId, method: c.req.method, path: c.req.path, err });
    return c.json(
      { statusCode: 500, error: reasonPhrase.INTERNAL, message: `Internal error (request id ${requestId})` },
      500,
    );
  };
}
