/**
 * The part of a browser a headless sign-in needs: a cookie jar and a fetch that sends and stores
 * cookies but never follows a redirect, so the caller sees every hop.
 *
 * Cookies are keyed by host name, path and name. The port is not part of the key, as in browsers
 * (RFC 6265 cookies do not isolate by port), so two replicas on 127.0.0.1 share a session as
 * they would behind one load balancer; hosts named in `sameSiteAs` (e.g. `localhost` and
 * `127.0.0.1`) are treated as one host. `Secure` is ignored: the provider is plain http on
 * loopback, which browsers treat as a secure context.
 */
import { isIP } from "node:net";

export interface BrowserSessionOptions {
  /** Origins or URLs whose hosts share one cookie jar, as if they were the same host. */
  sameSiteAs?: string[];
  /** Milliseconds since the epoch; tests of expiry pass their own clock. */
  now?: () => number;
}

export interface StoredCookie {
  name: string;
  value: string;
  /** The canonical host (after `sameSiteAs`) the cookie was set by, or its Domain attribute. */
  domain: string;
  /** False when the cookie had a Domain attribute and so also matches subdomains. */
  hostOnly: boolean;
  path: string;
  /** Milliseconds since the epoch; undefined for a session cookie. */
  expiresAt: number | undefined;
}

export class BrowserSession {
  private readonly cookies = new Map<string, StoredCookie>();
  private readonly hostAlias = new Map<string, string>();
  private readonly now: () => number;

  constructor(options: BrowserSessionOptions = {}) {
    const [first, ...rest] = (options.sameSiteAs ?? []).map(hostOf);
    if (first !== undefined) for (const host of [first, ...rest]) this.hostAlias.set(host, first);
    this.now = options.now ?? Date.now;
  }

  /** A fetch with this session's cookies; redirects come back as responses, never followed. */
  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(target);
    if (cookie !== "") headers.set("cookie", cookie);
    const response = await fetch(target, { ...init, headers, redirect: "manual" });
    this.store(target, response.headers.getSetCookie());
    return response;
  }

  /** The `Cookie` header a request to `url` carries: most specific path first. */
  cookieHeader(url: string | URL): string {
    const target = new URL(url);
    const host = this.canonicalHost(target.hostname);
    const now = this.now();
    return [...this.cookies.values()]
      .filter((cookie) => {
        if (cookie.expiresAt !== undefined && cookie.expiresAt <= now) return false;
        const hostMatches = cookie.hostOnly ? host === cookie.domain : domainMatches(host, cookie.domain);
        return hostMatches && pathMatches(target.pathname, cookie.path);
      })
      .sort((a, b) => b.path.length - a.path.length)
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join("; ");
  }

  /** Applies `Set-Cookie` header values received from `url`. */
  store(url: string | URL, setCookies: string[]): void {
    const origin = new URL(url);
    for (const line of setCookies) {
      const cookie = this.parse(origin, line);
      if (cookie === undefined) continue;
      const key = `${cookie.domain}\n${cookie.path}\n${cookie.name}`;
      if (cookie.expiresAt !== undefined && cookie.expiresAt <= this.now()) this.cookies.delete(key);
      else this.cookies.set(key, cookie);
    }
  }

  /** Every unexpired cookie, for assertions and debugging. */
  list(): StoredCookie[] {
    const now = this.now();
    return [...this.cookies.values()].filter((c) => c.expiresAt === undefined || c.expiresAt > now);
  }

  private canonicalHost(hostname: string): string {
    return this.hostAlias.get(hostname) ?? hostname;
  }

  private parse(origin: URL, line: string): StoredCookie | undefined {
    const [pair = "", ...attributes] = line.split(";");
    const equals = pair.indexOf("=");
    if (equals <= 0) return undefined;
    const host = this.canonicalHost(origin.hostname);
    const cookie: StoredCookie = {
      name: pair.slice(0, equals).trim(),
      value: pair.slice(equals + 1).trim(),
      domain: host,
      hostOnly: true,
      path: defaultPath(origin.pathname),
      expiresAt: undefined,
    };
    let maxAgeSeen = false;
    for (const attribute of attributes) {
      const separator = attribute.indexOf("=");
      const name = (separator < 0 ? attribute : attribute.slice(0, separator)).trim().toLowerCase();
      const value = separator < 0 ? "" : attribute.slice(separator + 1).trim();
      if (name === "path" && value.startsWith("/")) cookie.path = value;
      else if (name === "max-age" && /^-?\d+$/.test(value)) {
        // Max-Age wins over Expires whatever their order (RFC 6265 section 5.3 step 3).
        maxAgeSeen = true;
        cookie.expiresAt = this.now() + Number(value) * 1000;
      } else if (name === "expires" && !maxAgeSeen) {
        const time = Date.parse(value);
        if (!Number.isNaN(time)) cookie.expiresAt = time;
      } else if (name === "domain" && value !== "") {
        const domain = this.canonicalHost(value.replace(/^\./, "").toLowerCase());
        // An IP address has no subdomains: its cookies may only name the address itself.
        if (!domainMatches(host, domain) || (isIP(host) !== 0 && domain !== host)) return undefined;
        cookie.domain = domain;
        cookie.hostOnly = false;
      }
    }
    return cookie;
  }
}

function hostOf(originOrUrl: string): string {
  return URL.canParse(originOrUrl) ? new URL(originOrUrl).hostname : originOrUrl;
}

function domainMatches(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/** RFC 6265 section 5.1.4: the request path up to, not including, its last slash. */
function defaultPath(requestPath: string): string {
  const lastSlash = requestPath.lastIndexOf("/");
  return lastSlash <= 0 ? "/" : requestPath.slice(0, lastSlash);
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}
