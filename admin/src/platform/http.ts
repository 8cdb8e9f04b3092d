/** What every response and every unsafe request of the console goes through. */
import { type PageSources, pageHeaders } from "@tjm/platform/page-headers";
import { boundBody } from "@tjm/platform/request-body";
import type { Context, MiddlewareHandler } from "hono";

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

/** Every answer of the console carries them: its pages, and the API answers a page could be framed with. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  ...pageHeaders(CONSOLE_SOURCES),
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  };
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF: an unsafe request must come from this origin (its `Origin`, or `Sec-Fetch-Site:
 * same-origin`; a cross-site value of either refuses it) and carry JSON, which a cross-site
 * form cannot send without a preflight. `exempt` paths verify their own requests.
 */
export function sameOriginJson(publicOrigin: string, exempt: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    if (SAFE_METHODS.has(c.req.method) || exempt.includes(c.req.path)) return next();
    const origin = c.req.header("origin");
    const fetchSite = c.req.header("sec-fetch-site");
    const crossSite =
      (origin !== undefined && origin !== publicOrigin) ||
      (fetchSite !== undefined && fetchSite !== "same-origin");
    const sameOrigin = origin === publicOrigin || fetchSite === "same-origin";
    if (crossSite || !sameOrigin) {
      return c.json(
        { code: "CROSS_SITE_REQUEST", message: "unsafe requests must come from the console's own pages" },
        403,
      );
    }
    const mediaType = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    if (mediaType !== "application/json") {
      return c.json({ code: "JSON_REQUIRED", message: "unsafe requests must send application/json" }, 403);
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
  return c.json({ code: "PAYLOAD_TOO_LARGE", message: new BodyTooLargeError(maxBytes).message }, 413, {
    connection: "close",
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
