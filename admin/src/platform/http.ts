/** What every response and every unsafe request of the console goes through. */
import type { MiddlewareHandler } from "hono";

/** No inline script or style anywhere; the console is never framed. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
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
