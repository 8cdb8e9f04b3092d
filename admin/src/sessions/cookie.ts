/**
 * The session cookie. `__Host-` (Secure, Path=/, no Domain) wherever browsers accept it: https,
 * and plain http on a loopback host, which browsers treat as a secure context. On plain http
 * elsewhere a Secure cookie would never come back, so the console falls back to `tjm_admin`
 * without Secure (and warns at startup): run it behind https there.
 */
import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export interface SessionCookie {
  name: string;
  secure: boolean;
}

export function sessionCookieFor(publicUrl: string): SessionCookie {
  const url = new URL(publicUrl);
  const secure = url.protocol === "https:" || LOOPBACK_HOSTS.has(url.hostname);
  return secure ? { name: "__Host-tjm_admin", secure: true } : { name: "tjm_admin", secure: false };
}

/** A new random session id (256 bits), as the cookie carries it. */
export function newSessionId(): string {
  return randomBytes(32).toString("base64url");
}

export function readSessionId(c: Context, cookie: SessionCookie): string | undefined {
  const value = getCookie(c, cookie.name);
  return value !== undefined && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

/** A session cookie (no Max-Age): the server-side row decides how long it lives. */
export function writeSessionId(c: Context, cookie: SessionCookie, id: string): void {
  setCookie(c, cookie.name, id, { httpOnly: true, secure: cookie.secure, sameSite: "Lax", path: "/" });
}

export function clearSessionId(c: Context, cookie: SessionCookie): void {
  deleteCookie(c, cookie.name, { httpOnly: true, secure: cookie.secure, sameSite: "Lax", path: "/" });
}
