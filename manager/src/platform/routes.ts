/**
 * The pieces every route definition is made of, so a route file states only what is its own:
 * path, words, request, its success response and the errors it adds. Each route file still
 * defines its one operation with apiRoute, or with its audience's factory
 * (identity/tokens/audiences.ts), which builds on it.
 */
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { type ErrorCode, errorResponses } from "./errors.ts";
import { decodeJsonBody } from "./http.ts";

/** A UUID path parameter. */
export function uuidPathParam(name: string, example: string) {
  return z.uuid().openapi({ param: { name, in: "path" }, example });
}

export function jsonContent<S extends z.ZodType>(schema: S, example?: unknown) {
  return { "application/json": example === undefined ? { schema } : { schema, example } };
}

/** A required JSON body: an optional one with another content type would validate as {}. */
export function jsonBody<S extends z.ZodType>(schema: S, example?: unknown) {
  return { body: { required: true, content: jsonContent(schema, example) } };
}

export function jsonResponse<S extends z.ZodType>(description: string, schema: S, example?: unknown) {
  return { description, content: jsonContent(schema, example) };
}

/**
 * A schema of @tjm/protocol as a named component. zod 4 gives a schema its methods when it is
 * built, so the protocol's schemas (built before @hono/zod-openapi extends zod) lack .openapi():
 * the shape goes into a new object.
 */
export function protocolComponent<Shape extends z.ZodRawShape>(
  name: string,
  schema: { shape: Shape },
  example: unknown,
) {
  return z.object(schema.shape).openapi(name, { example });
}

/** A request body can be too large or of another type than JSON. */
export const BODY_ERRORS = [
  "request.body_too_large",
  "request.unsupported_media_type",
] as const satisfies ErrorCode[];

/** What bearer authentication refuses a request with (identity/tokens/verify.ts). */
export const BEARER_ERRORS = [
  "auth.token_missing",
  "auth.token_invalid",
  "auth.token_expired",
  "auth.token_revoked",
  "auth.audience_missing",
  "auth.token_refused",
  "auth.verification_unavailable",
] as const satisfies ErrorCode[];

export type RouteDefinition = RouteConfig & {
  /** The codes it answers with besides `validation.failed` and `internal.error`, which every route has. */
  errors: readonly ErrorCode[];
};

/**
 * A route with its error responses named by code. Its type keeps only the success responses:
 * handlers throw an ApiError for the others, they never answer them with c.json. A route taking
 * JSON decodes its body strictly (decodeJsonBody) after its own middleware (its bearer check)
 * and before its validator parses the body.
 */
export function apiRoute<R extends RouteDefinition>(definition: R) {
  const { errors, responses, ...route } = definition;
  const readsJson = route.request?.body?.content["application/json"] !== undefined;
  const own = route.middleware === undefined ? [] : [route.middleware].flat();
  const built = {
    ...route,
    middleware: readsJson ? [...own, decodeJsonBody] : route.middleware,
    responses: { ...responses, ...errorResponses("validation.failed", ...errors, "internal.error") },
  };
  // Typed as the definition's own middleware: the decoding sets nothing a handler reads.
  return createRoute(built as Omit<R, "errors" | "responses"> & { responses: R["responses"] });
}
