/** What every response and every unsafe request of the console goes through. */
import { type PageSources, pageHeaders } from "@tjm/platform/page-headers";
import type { MiddlewareHandler } from "hono";

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
