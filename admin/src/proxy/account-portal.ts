/**
 * `/api/me…`: the account portal (the Manager's /api/v1/me…) for the signed-in account, with
 * the session's account-portal token, which every console session holds. Forwarded by path,
 * method, query and body, so every /me route the Manager has is reachable here as it is added;
 * the answer comes back as the Manager wrote it (binary ones too: the avatar), except that every
 * `avatarUrl` on the Manager's path names the console's. The browser never sees the token.
 *
 * One route is the console's own: POST /api/me/profile/avatar takes the image itself, asks the
 * Manager for an upload URL, sends the bytes to storage there and claims the upload, so the
 * browser talks only to the console.
 */
import type { Context, Hono } from "hono";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { answerError, utf8Body } from "../platform/http.ts";
import { accessTokenFor } from "../sessions/sessions.ts";
import { FORWARDED_HEADERS, managerClient } from "./routes.ts";

export const ACCOUNT_PORTAL_PATH = "/api/me";
const MANAGER_ACCOUNT_PATH = "/api/v1/me";

/** Where the page posts an avatar file; GET on the same path reads the avatar. */
export const AVATAR_UPLOAD_PATH = `${ACCOUNT_PORTAL_PATH}/profile/avatar`;
/** The image types an avatar may be (the Manager decides again, from the bytes). */
export const AVATAR_MEDIA_TYPES = ["image/png", "image/jpeg", "image/webp"] as const;
/** The Manager's limit on an avatar: a larger body is refused here before it is read. */
export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;

const BODYLESS = new Set(["GET", "HEAD", "DELETE"]);

/** The Manager's path for a console path under /api/me, or undefined for one that tries to leave it. */
export function managerPathFor(consolePath: string): string | undefined {
  const rest = consolePath.slice(ACCOUNT_PORTAL_PATH.length);
  if (rest !== "" && !rest.startsWith("/")) return undefined;
  const segments = rest.split("/").slice(1);
  for (const segment of segments) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
    if (decoded === "." || decoded === ".." || decoded.includes("/") || decoded.includes("\\"))
      return undefined;
  }
  return `${MANAGER_ACCOUNT_PATH}${rest}`;
}

/**
 * Every `avatarUrl` on the Manager's path in an answer (the snapshot's, each remembered
 * account's), renamed to the console's, where the same route is forwarded.
 */
export function consoleAvatarUrl(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(consoleAvatarUrl);
  if (typeof body !== "object" || body === null) return body;
  return Object.fromEntries(
    Object.entries(body).map(([name, value]) => [
      name,
      name === "avatarUrl" && typeof value === "string" && value.startsWith(`${MANAGER_ACCOUNT_PATH}/`)
        ? `${ACCOUNT_PORTAL_PATH}${value.slice(MANAGER_ACCOUNT_PATH.length)}`
        : consoleAvatarUrl(value),
    ]),
  );
}

interface ManagerAnswer {
  response: Response;
  data?: unknown;
  error?: unknown;
}

/** The Manager's answer to the browser: its status, its forwarded headers, its body. */
async function forwardAnswer(
  c: Context<AdminEnv>,
  deps: AdminDeps,
  answer: ManagerAnswer,
): Promise<Response> {
  const { response } = answer;
  if (response.status === 401) {
    await deps.sessions.end(c.get("session").hash);
    return answerError(c, "auth.session_missing", "the session has ended; sign in again");
  }
  const headers = new Headers();
  for (const name of [...FORWARDED_HEADERS, "cache-control"]) {
    const value = response.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
  headers.set("x-request-id", c.get("requestId"));
  if (response.status === 204 || c.req.method === "HEAD")
    return new Response(null, { status: response.status, headers });
  if (!response.ok) {
    // openapi-fetch hands error bodies back parsed.
    const raw = answer.error;
    const body =
      raw === undefined || raw === null ? null : typeof raw === "string" ? raw : JSON.stringify(raw);
    return new Response(body, { status: response.status, headers });
  }
  const json = (headers.get("content-type") ?? "").startsWith("application/json");
  if (!json)
    return new Response(answer.data as ReadableStream<Uint8Array> | null, {
      status: response.status,
      headers,
    });
  const text = await new Response(answer.data as ReadableStream<Uint8Array> | null).text();
  const body = text === "" ? text : JSON.stringify(consoleAvatarUrl(JSON.parse(text)));
  return new Response(body, { status: response.status, headers });
}

function portalToken(c: Context<AdminEnv>): string | undefined {
  return accessTokenFor(c.get("session"), "account-portal");
}

const noToken = (c: Context<AdminEnv>) =>
  answerError(c, "auth.session_missing", "the session holds no account-portal token; sign in again");

const managerDown = (c: Context<AdminEnv>, deps: AdminDeps, error: unknown) => {
  deps.logger.warn("the Manager did not answer", { error: String(error) });
  return answerError(c, "dependency.manager_unavailable", "the Manager did not answer");
};

export function registerAccountPortal(app: Hono<AdminEnv>, deps: AdminDeps, fetchImpl: typeof fetch = fetch) {
  app.post(AVATAR_UPLOAD_PATH, async (c) => {
    const token = portalToken(c);
    if (token === undefined) return noToken(c);
    const contentType = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    if (!(AVATAR_MEDIA_TYPES as readonly string[]).includes(contentType)) {
      return answerError(
        c,
        "avatar.unsupported_type",
        `an avatar is one of ${AVATAR_MEDIA_TYPES.join(", ")}`,
      );
    }
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const sdk = managerClient(deps, c.get("requestId"), token, fetchImpl);
    try {
      const created = await sdk.POST("/api/v1/me/profile/avatar-upload-urls", {
        body: { contentType, contentLength: bytes.byteLength },
      });
      if (created.data === undefined) return forwardAnswer(c, deps, { ...created, data: undefined });
      const upload = created.data;
      // The signature covers content-type and content-length; fetch sets the length from the bytes.
      const stored = await fetchImpl(upload.url, {
        method: upload.method,
        headers: { "content-type": upload.headers["content-type"] },
        body: bytes,
      });
      await stored.body?.cancel();
      if (!stored.ok) {
        deps.logger.warn("storage refused an avatar upload", { status: stored.status });
        return answerError(c, "dependency.unavailable", "storage did not take the avatar");
      }
      const claimed = await sdk.PATCH("/api/v1/me/profile", {
        body: { avatarUploadId: upload.avatarUploadId },
        parseAs: "stream",
      });
      return forwardAnswer(c, deps, claimed);
    } catch (error) {
      return managerDown(c, deps, error);
    }
  });

  const forward = async (c: Context<AdminEnv>) => {
    const token = portalToken(c);
    if (token === undefined) return noToken(c);
    const path = managerPathFor(c.req.path);
    if (path === undefined)
      return answerError(c, "route.not_found", `No route ${c.req.method} ${c.req.path}`);
    const method = c.req.method;
    const body = BODYLESS.has(method) ? undefined : await utf8Body(c);
    if (body instanceof Response) return body;
    const query = Object.fromEntries(
      Object.entries(c.req.queries()).map(([name, values]) => [
        name,
        values.length === 1 ? values[0] : values,
      ]),
    );
    const sdk = managerClient(deps, c.get("requestId"), token, fetchImpl);
    try {
      // Any path under /me: the SDK's typed paths name only the routes that exist today.
      const answer = await sdk.request(
        method.toLowerCase() as "get",
        path as "/api/v1/me",
        {
          params: { query } as never,
          ...(body === undefined || body === ""
            ? {}
            : { body: body as never, bodySerializer: (raw: unknown) => raw }),
          parseAs: "stream",
        } as never,
      );
      return await forwardAnswer(c, deps, answer as ManagerAnswer);
    } catch (error) {
      return managerDown(c, deps, error);
    }
  };
  app.all(ACCOUNT_PORTAL_PATH, forward);
  app.all(`${ACCOUNT_PORTAL_PATH}/*`, forward);
}
