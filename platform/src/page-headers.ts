/**
 * The security headers of every HTML page TJM serves (the Manager's provider pages and API
 * docs, the Admin console's views), built in one place from the page's own source list: a page
 * names what it loads, everything else is refused. Every page is never framed
 * (frame-ancestors and X-Frame-Options: a framed one-button page is a clickjacking target),
 * never sniffed and never leaks its URL (which may carry an interaction uid) as a Referer.
 * Every answer that is not a page gets NON_PAGE_HEADERS instead.
 */
import { createHash } from "node:crypto";

/** What one page loads, per CSP fetch directive; a directive not named allows nothing. */
export interface PageSources {
  /** Script URLs ('self') or hashes of inline scripts ('sha256-…'); never 'unsafe-inline'. */
  script?: readonly string[];
  style?: readonly string[];
  img?: readonly string[];
  font?: readonly string[];
  connect?: readonly string[];
  worker?: readonly string[];
  /** Where its forms may post; not named, form-action is left out (see contentSecurityPolicy). */
  formAction?: readonly string[];
}

type FetchSources = Omit<PageSources, "formAction">;

const DIRECTIVES: Record<keyof FetchSources, string> = {
  script: "script-src",
  style: "style-src",
  img: "img-src",
  font: "font-src",
  connect: "connect-src",
  worker: "worker-src",
};

/** The CSP source expression allowing exactly this inline script or style. */
export function inlineHash(content: string): string {
  return `'sha256-${createHash("sha256").update(content).digest("base64")}'`;
}

/**
 * form-action only where a page names it: browsers apply it to the redirects after a form is
 * posted, and the provider's sign-in form answers with a redirect to the client's registered
 * redirect URI, on any origin.
 */
export function contentSecurityPolicy(sources: PageSources): string {
  const fetches = (Object.keys(DIRECTIVES) as (keyof FetchSources)[]).map((name) => {
    const list = sources[name] ?? [];
    return `${DIRECTIVES[name]} ${list.length > 0 ? list.join(" ") : "'none'"}`;
  });
  return [
    "default-src 'none'",
    ...fetches,
    "object-src 'none'",
    "base-uri 'none'",
    ...(sources.formAction ? [`form-action ${sources.formAction.join(" ")}`] : []),
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The headers a page with these sources is served with. */
export function pageHeaders(sources: PageSources): Record<string, string> {
  return {
    "content-security-policy": contentSecurityPolicy(sources),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

/**
 * The headers of every answer that is not a page (JSON, an image, a script, an event stream): a
 * browser opening one as a document may run and load nothing from it and frame it nowhere, and
 * never sniffs it into another type (a JSON body holding `<script>` read as HTML).
 */
export const NON_PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
};

/**
 * An image people upload (an avatar), served back: also sandboxed, so even a browser that
 * renders it as a document (an SVG, were one ever let through) gives it no origin to act in.
 */
export const UPLOADED_IMAGE_HEADERS: Readonly<Record<string, string>> = {
  ...NON_PAGE_HEADERS,
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
};

/** The 'sha256-…' sources a policy's script-src holds (oidc-provider adds its inline scripts' there). */
export function scriptHashes(policy: string | undefined): string[] {
  const scriptSrc = (policy ?? "")
    .split(";")
    .map((directive) => directive.trim().split(/\s+/))
    .find(([name]) => name === "script-src");
  return (scriptSrc ?? []).slice(1).filter((source) => source.startsWith("'sha256-"));
}
