/**
 * `/api/operations/*`: the operations the console shows, forwarded to the Manager through the
 * generated SDK with the session's access token. The browser never sees the token nor talks to
 * the Manager; bodies come back as the Manager wrote them. A Manager 401 (account disabled,
 * session revoked) ends the console session too. A session without an operations token (an
 * account without the operator role) is refused here with 403: the Manager is not asked.
 */
import { createTjmClient, type TjmClient } from "@tjm/sdk";
import type { Context, Hono } from "hono";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { answerError, utf8Body } from "../platform/http.ts";
import { accessTokenFor } from "../sessions/sessions.ts";
import type { ConsoleResource } from "../sign-in/relying-party.ts";

/** The SDK's answer as forwarded: openapi-fetch with `parseAs: "text"` leaves the body untouched. */
export interface ManagerAnswer {
  response: Response;
  data?: unknown;
  error?: unknown;
}

/** `body`: the browser's JSON as it sent it, for the operations that take one. */
type Call = (client: TjmClient, c: Context<AdminEnv>, body: never) => Promise<ManagerAnswer>;

export const asText = { parseAs: "text" } as const;

/**
 * A body goes to the Manager as the browser sent it: the Manager parses and judges it, and its
 * answer comes back. Parsing it here and encoding it again broke on what the Manager refuses
 * cleanly (JSON.stringify overflows the stack on a deeply nested body) and answered 502.
 */
export const rawJson = { ...asText, bodySerializer: (body: unknown) => body } as const;

/** Query parameters as the SDK takes them: repeated ones as arrays. */
export function queryOf(c: Context<AdminEnv>): never {
  const entries = Object.entries(c.req.queries()).map(([name, values]) => [
    name,
    values.length === 1 ? values[0] : values,
  ]);
  return Object.fromEntries(entries) as never;
}

/** The request's body as text, bounded by the body limit; none is an empty object; not UTF-8, a 400. */
export async function jsonText(c: Context<AdminEnv>): Promise<string | Response> {
  const text = await utf8Body(c);
  return text === "" ? "{}" : text;
}

/** One Manager operation the console forwards, under the path it serves it on. */
export interface ForwardedOperation {
  method: "get" | "post" | "put" | "delete";
  path: string;
  /** The operation sends the request's JSON body on. */
  takesBody?: boolean;
  call: Call;
  /** The answer shows a secret once: no cache may keep it. */
  secret?: boolean;
}

const jobId = (c: Context<AdminEnv>) => ({ path: { jobId: c.req.param("jobId") as string } });
const workerId = (c: Context<AdminEnv>) => ({ path: { workerId: c.req.param("workerId") as string } });

export const operations: ForwardedOperation[] = [
  {
    method: "get",
    path: "/jobs",
    call: (sdk, c) => sdk.GET("/api/v1/operations/jobs", { params: { query: queryOf(c) }, ...asText }),
  },
  {
    method: "post",
    path: "/jobs",
    takesBody: true,
    call: (sdk, _c, body) => sdk.POST("/api/v1/operations/jobs", { body, ...rawJson }),
  },
  {
    method: "get",
    path: "/jobs/:jobId",
    call: (sdk, c) => sdk.GET("/api/v1/operations/jobs/{jobId}", { params: jobId(c), ...asText }),
  },
  {
    method: "get",
    path: "/jobs/:jobId/attempts/:attemptId/log",
    call: (sdk, c) =>
      sdk.GET("/api/v1/operations/jobs/{jobId}/attempts/{attemptId}/log", {
        params: {
          path: { jobId: c.req.param("jobId") as string, attemptId: c.req.param("attemptId") as string },
        },
        ...asText,
      }),
  },
  {
    method: "post",
    path: "/jobs/:jobId/cancel",
    call: (sdk, c) => sdk.POST("/api/v1/operations/jobs/{jobId}/cancel", { params: jobId(c), ...asText }),
  },
  {
    method: "post",
    path: "/jobs/:jobId/retry",
    call: (sdk, c) => sdk.POST("/api/v1/operations/jobs/{jobId}/retry", { params: jobId(c), ...asText }),
  },
  {
    method: "post",
    path: "/jobs/:jobId/resume-uploads",
    call: (sdk, c) =>
      sdk.POST("/api/v1/operations/jobs/{jobId}/resume-uploads", { params: jobId(c), ...asText }),
  },
  {
    method: "get",
    path: "/workers",
    call: (sdk, c) => sdk.GET("/api/v1/operations/workers", { params: { query: queryOf(c) }, ...asText }),
  },
  {
    method: "get",
    path: "/workers/:workerId",
    call: (sdk, c) => sdk.GET("/api/v1/operations/workers/{workerId}", { params: workerId(c), ...asText }),
  },
  {
    method: "post",
    path: "/workers/:workerId/drain",
    call: (sdk, c) =>
      sdk.POST("/api/v1/operations/workers/{workerId}/drain", { params: workerId(c), ...asText }),
  },
  {
    method: "post",
    path: "/workers/:workerId/undrain",
    call: (sdk, c) =>
      sdk.POST("/api/v1/operations/workers/{workerId}/undrain", { params: workerId(c), ...asText }),
  },
  {
    method: "post",
    path: "/workers/:workerId/disable",
    call: (sdk, c) =>
      sdk.POST("/api/v1/operations/workers/{workerId}/disable", { params: workerId(c), ...asText }),
  },
  {
    method: "get",
    path: "/projects",
    call: (sdk, c) => sdk.GET("/api/v1/operations/projects", { params: { query: queryOf(c) }, ...asText }),
  },
  {
    method: "post",
    path: "/enrollment-tokens",
    secret: true,
    takesBody: true,
    call: (sdk, _c, body) => sdk.POST("/api/v1/operations/enrollment-tokens", { body, ...rawJson }),
  },
];

export const PROXY_PATH = "/api/operations";

/** Headers of the Manager's answer worth passing on; never its WWW-Authenticate or cookies. */
export const FORWARDED_HEADERS = ["content-type", "retry-after", "etag"];

/** The SDK on the Manager with `token`, naming the console's request id on every call. */
export function managerClient(
  deps: AdminDeps,
  requestId: string,
  token: string,
  fetchImpl: typeof fetch,
): TjmClient {
  return createTjmClient({
    baseUrl: deps.managerUrl,
    token,
    // The Manager keeps the console's request id: its error body passes through unchanged
    // and still names the x-request-id the console answers with.
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      request.headers.set("x-request-id", requestId);
      return fetchImpl(request);
    },
  });
}

/**
 * The Manager's answer to the browser: its status, forwarded headers and body as the Manager
 * wrote them; `no-store` for an answer showing a secret once. A Manager 401 ends the session.
 */
export async function answerFromManager(
  c: Context<AdminEnv>,
  deps: AdminDeps,
  answer: ManagerAnswer,
  secret: boolean,
): Promise<Response> {
  const { response } = answer;
  if (response.status === 401) {
    await deps.sessions.end(c.get("session").hash);
    return answerError(c, "auth.session_missing", "the session has ended; sign in again");
  }
  const headers = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set("cache-control", secret ? "no-store" : "no-cache");
  headers.set("x-request-id", c.get("requestId"));
  // openapi-fetch hands error bodies back parsed even with parseAs "text".
  const raw = answer.data ?? answer.error;
  const body = raw === undefined || raw === null ? null : typeof raw === "string" ? raw : JSON.stringify(raw);
  return new Response(response.status === 204 ? null : body, { status: response.status, headers });
}

/**
 * Serves each operation under `basePath`, forwarding it with the session's token for `resource`;
 * a session without one is refused with 403 (`refusal`) and the Manager is not asked.
 */
export function registerForwarding(
  app: Hono<AdminEnv>,
  deps: AdminDeps,
  forwarding: {
    basePath: string;
    operations: readonly ForwardedOperation[];
    resource: ConsoleResource;
    refusal: string;
  },
  fetchImpl: typeof fetch,
) {
  for (const operation of forwarding.operations) {
    app.on(operation.method.toUpperCase(), `${forwarding.basePath}${operation.path}`, async (c) => {
      const token = accessTokenFor(c.get("session"), forwarding.resource);
      if (token === undefined) return answerError(c, "auth.token_refused", forwarding.refusal);
      const sdk = managerClient(deps, c.get("requestId"), token, fetchImpl);
      // Read before the Manager is called: a body the limit refuses is a 413, not a Manager failure.
      const sent = operation.takesBody ? await jsonText(c) : undefined;
      if (sent instanceof Response) return sent;
      let answer: ManagerAnswer;
      try {
        answer = await operation.call(sdk, c, sent as never);
      } catch (error) {
        deps.logger.warn("the Manager did not answer", { error: String(error) });
        return answerError(c, "dependency.manager_unavailable", "the Manager did not answer");
      }
      return answerFromManager(c, deps, answer, operation.secret === true);
    });
  }
}

export function registerProxy(app: Hono<AdminEnv>, deps: AdminDeps, fetchImpl: typeof fetch = fetch) {
  registerForwarding(
    app,
    deps,
    {
      basePath: PROXY_PATH,
      operations,
      resource: "operations",
      refusal: "this account does not hold the operator role; operations are not offered",
    },
    fetchImpl,
  );
}
