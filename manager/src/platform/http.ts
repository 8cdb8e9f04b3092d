import {
  OpenAPIHono,
  type RouteConfig,
  type RouteConfigToEnv,
  type RouteHandler,
  z,
} from "@hono/zod-openapi";
import { decodeUtf8, loneSurrogateDetails, NOT_UTF8_DETAIL } from "@tjm/platform/json-text";
import { NON_PAGE_HEADERS } from "@tjm/platform/page-headers";
import { boundBody } from "@tjm/platform/request-body";
import type { Context, MiddlewareHandler } from "hono";
import { ApiError, answerError, dotPath, issueCode, validationError } from "./errors.ts";

// Plain messages for the two commonest failures: a missing field and a malformed id.
z.config({
  customError: (issue) => {
    if (issue.code === "invalid_type" && issue.input === undefined) return "required";
    if (issue.code === "invalid_format" && issue.format === "uuid") return "must be a UUID";
    return undefined;
  },
});

export interface AppEnv {
  Variables: {
    requestId: string;
    /** A write already ran the scheduler after its commit (a submitted job): no wake-up for it. */
    scheduled?: boolean;
  };
}

/**
 * A handler typed by its route, so params, body and responses are all inferred, and what the
 * route's own middleware sets (an audience's principal) too.
 */
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv & RouteConfigToEnv<R>>;

/**
 * Every sub-app is an OpenAPIHono with the same validation hook, so path, query and body
 * failures all answer with the one 400 envelope listing every issue.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        // An issue about the whole body (an array instead of an object, say) has no path of its own.
        const whole = result.target === "json" ? "body" : result.target;
        // @hono/zod-validator hands the hook what it validated; its type leaves it out.
        const input = (result as { data?: unknown }).data;
        throw validationError(
          result.error.issues.map((issue) => ({
            path: dotPath(issue.path) || whole,
            message: issue.message,
            code: issueCode(issue, input),
          })),
        );
      }
    },
  });
}

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a caller's x-request-id when it is sane, otherwise makes one; echoed on every response. */
export const requestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  const incoming = c.req.header("x-request-id");
  const id = incoming && INCOMING_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
  c.set("requestId", id);
  c.header("x-request-id", id);
  await next();
};

/**
 * Every answer starts with the headers of an answer that is not a page; a page (the API docs,
 * the provider's pages) or an avatar replaces them with its own when it answers, since headers
 * given with an answer win over these.
 */
export const nonPageHeaders: MiddlewareHandler = async (c, next) => {
  for (const [name, value] of Object.entries(NON_PAGE_HEADERS)) c.header(name, value);
  await next();
};

function announcesBody(request: Request): boolean {
  return request.headers.has("transfer-encoding") || Number(request.headers.get("content-length") ?? 0) > 0;
}

/**
 * An answer sent before the body was read (401, 413 …) closes the connection: the unread
 * body would otherwise be taken for the next request, and Node drops such a socket under a
 * client that reuses it. Reads only headers and bodyUsed: touching `body` on
 * @hono/node-server builds a whole web Request.
 */
export const closeWhenBodyUnread: MiddlewareHandler = async (c, next) => {
  const request = c.req.raw; // limitBody may swap c.req.raw for a counted request
  await next();
  if (announcesBody(request) && !request.bodyUsed) c.header("connection", "close");
};

/** Routes that take a form or no body at all (the provider's pages, the metrics port): 16 KiB. */
export const SMALL_BODY_MAX_BYTES = 16 * 1024;

/**
 * 413 for bodies over `maxBytes`, on every route it is put in front of, before the body is
 * buffered: a declared Content-Length over the limit is refused from the header, a chunked
 * body errors in the handler's read at the chunk that passes the limit (whatever the handler
 * then made of that error, the answer is the 413). The connection closes after a 413: the rest
 * of the body is never read.
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  const tooLarge = () => new ApiError("request.body_too_large", `Request body exceeds ${maxBytes} bytes`);
  const answer = (c: Context) => answerError(c, tooLarge(), { connection: "close" });
  return async (c, next) => {
    const bounded = boundBody(c.req.raw, maxBytes, tooLarge);
    if (bounded.declaredTooLarge) return answer(c);
    c.req.raw = bounded.request;
    await next();
    if (!bounded.exceeded()) return;
    c.res = undefined; // the handler's answer goes, headers and all
    c.res = answer(c);
  };
}

/** The media types Hono's validator parses as JSON (its own pattern). */
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * A JSON body read strictly, before the route's validator parses it: bytes that are not UTF-8
 * and strings holding a lone surrogate answer 400 at their place, where a lenient read would
 * store U+FFFD with a 200. Run by every route with a JSON body (apiRoute), after its bearer
 * check: a refused token still gets its answer without the body being read. Hono keeps the
 * bytes read here, so the validator's `c.req.json()` decodes these same, now known good, bytes.
 */
export const decodeJsonBody: MiddlewareHandler = async (c, next) => {
  const mediaType = (c.req.header("content-type") ?? "").split(";")[0]?.trim() ?? "";
  if (!JSON_MEDIA_TYPE.test(mediaType)) return next();
  const text = decodeUtf8(await c.req.arrayBuffer());
  if (text === undefined) throw validationError([NOT_UTF8_DETAIL]);
  const surrogates = loneSurrogateDetails(text);
  if (surrogates.length > 0) throw validationError(surrogates);
  await next();
};
