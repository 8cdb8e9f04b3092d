/** What every response and every unsafe request of the console goes through. */

import { type ErrorCode, type ErrorDetail, errorBody, errorCodes } from "@tjm/platform/error-codes";
import { decodeUtf8, NOT_UTF8_DETAIL } from "@tjm/platform/json-text";
import {
  NON_PAGE_HEADERS,
  type PageSources,
  pageHeaders,
  UPLOADED_IMAGE_HEADERS,
} from "@tjm/platform/page-headers";
import { boundBody } from "@tjm/platform/request-body";
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * What the console's pages load: their script and style files, data: images, and requests to
 * the console itself; no inline script or style anywhere; forms post only here.
 */
const CONSOLE_SOURCES: PageSources = {
  script: ["'self'"],
  style: ["'self'"],
  img: ["'self'", "data:"],
  connect: ["'self'"],
  formAction: ["'self'"],
};

/** The console's pages' headers; every other answer keeps all but the CSP (answerHeaders). */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  ...pageHeaders(CONSOLE_SOURCES),
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/**
 * The security headers of an answer of this content type: a page's (HTML) allow what the pages
 * load; anything else (JSON, the event stream, a redirect) allows nothing, and an avatar is
 * sandboxed too.
 */
export function answerHeaders(contentType: string | undefined): Readonly<Record<string, string>> {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "text/html") return PAGE_HEADERS;
  if (type.startsWith("image/")) return { ...PAGE_HEADERS, ...UPLOADED_IMAGE_HEADERS };
  return { ...PAGE_HEADERS, ...NON_PAGE_HEADERS };
}

export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(answerHeaders(c.res.headers.get("content-type") ?? undefined)))
      c.header(name, value);
  };
}

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Keeps a caller's sane x-request-id, otherwise makes one; echoed on every answer and sent on
 * to the Manager, so a proxied answer's body and header name the same request.
 */
export function requestId(): MiddlewareHandler {
  return async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const id = incoming && INCOMING_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", id);
    c.header("x-request-id", id);
    await next();
  };
}

/** The console's own errors, in the Manager's one error body. */
export function answerError(
  c: Context,
  code: ErrorCode,
  message: string,
  options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {},
): Response {
  const id = (c.get("requestId") as string | undefined) ?? crypto.randomUUID();
  const status = errorCodes[code].status as ContentfulStatusCode;
  return c.json(errorBody(code, message, id, { details: options.details }), status, {
    ...options.headers,
    "x-request-id": id,
  });
}

/**
 * A JSON body's text for the Manager, decoded strictly: bytes that are not UTF-8 are refused
 * here with the Manager's own 400, where a lenient read would hand the Manager well-formed text
 * with U+FFFD in their place, which it would store. Its strings are the Manager's to judge.
 */
export async function utf8Body(c: Context): Promise<string | Response> {
  const text = decodeUtf8(await c.req.arrayBuffer());
  if (text !== undefined) return text;
  return answerError(c, "validation.failed", "Validation failed", { details: [NOT_UTF8_DETAIL] });
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF: an unsafe request must come from this origin (its `Origin`, or `Sec-Fetch-Site:
 * same-origin`; a cross-site value of either refuses it) and carry JSON, which a cross-site
 * form cannot send without a preflight. `exempt` paths verify their own requests; `otherMedia`
 * names the paths that take another body (an image) and check its type themselves.
 */
export function sameOriginJson(
  publicOrigin: string,
  exempt: readonly string[],
  otherMedia: readonly string[] = [],
): MiddlewareHandler {
  return async (c, next) => {
    if (SAFE_METHODS.has(c.req.method) || exempt.includes(c.req.path)) return next();
    const origin = c.req.header("origin");
    const fetchSite = c.req.header("sec-fetch-site");
    const crossSite =
      (origin !== undefined && origin !== publicOrigin) ||
      (fetchSite !== undefined && fetchSite !== "same-origin");
    const sameOrigin = origin === publicOrigin || fetchSite === "same-origin";
    if (crossSite || !sameOrigin) {
      return answerError(c, "request.cross_site", "unsafe requests must come from the console's own pages");
    }
    const mediaType = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    if (!otherMedia.includes(c.req.path) && mediaType !== "application/json") {
      return answerError(c, "request.json_required", "unsafe requests must send application/json");
    }
    return next();
  };
}

/** Every route but the proxy's takes a small form or no body at all (back-channel logout, sign-out). */
export const SMALL_BODY_MAX_BYTES = 16 * 1024;

/** What a reader of a body over the limit gets instead of the bytes past it. */
export class BodyTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the request body exceeds ${maxBytes} bytes`);
  }
}

/** The console's 413, in its one error body; the connection closes under the unread rest. */
export function bodyTooLarge(c: Context, maxBytes: number): Response {
  return answerError(c, "request.body_too_large", new BodyTooLargeError(maxBytes).message, {
    headers: { connection: "close" },
  });
}

function announcesBody(request: Request): boolean {
  return request.headers.has("transfer-encoding") || Number(request.headers.get("content-length") ?? 0) > 0;
}

/**
 * An answer sent before the body was read (401, 403, 413 …) closes the connection: the unread
 * body would otherwise be taken for the next request. Reads only headers and bodyUsed.
 */
export function closeWhenBodyUnread(): MiddlewareHandler {
  return async (c, next) => {
    const request = c.req.raw; // limitBody swaps c.req.raw for a counted request
    await next();
    if (announcesBody(request) && !request.bodyUsed) c.header("connection", "close");
  };
}

/**
 * 413 for a body over the limit of its route (`maxBytesFor(path)`), on every route, before the
 * body is buffered: a declared Content-Length over it is refused from the header, a chunked
 * body errors in the handler's read at the chunk that passes it, and whatever the handler made
 * of that error, the answer is the 413.
 */
export function limitBody(maxBytesFor: (path: string) => number): MiddlewareHandler {
  return async (c, next) => {
    const maxBytes = maxBytesFor(c.req.path);
    const bounded = boundBody(c.req.raw, maxBytes, () => new BodyTooLargeError(maxBytes));
    if (bounded.declaredTooLarge) return bodyTooLarge(c, maxBytes);
    c.req.raw = bounded.request;
    await next();
    if (!bounded.exceeded()) return;
    c.res = undefined; // the handler's answer goes, headers and all
    c.res = bodyTooLarge(c, maxBytes);
  };
}
