/**
 * `/api/management/clients…`: client management (the Manager's /api/v1/management/clients…) for
 * an account holding the client-admin role, with the session's admin-console token, through the
 * generated SDK. A session without that token is refused here with 403, the Manager not asked
 * (as the operations proxy does without an operations token). Answers showing a secret (a
 * created client, a rotation) are `no-store`.
 */
import type { TjmClient } from "@tjm/sdk";
import type { Context, Hono } from "hono";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { answerError } from "../platform/http.ts";
import { accessTokenFor } from "../sessions/sessions.ts";
import {
  answerFromManager,
  asText,
  jsonText,
  type ManagerAnswer,
  managerClient,
  queryOf,
  rawJson,
} from "./routes.ts";

export const CLIENTS_PROXY_PATH = "/api/management/clients";

interface ClientOperation {
  method: "get" | "post" | "put" | "delete";
  path: string;
  takesBody?: boolean;
  /** The answer shows a secret once. */
  secret?: boolean;
  call: (sdk: TjmClient, c: Context<AdminEnv>, body: never) => Promise<ManagerAnswer>;
}

const client = (c: Context<AdminEnv>) => ({ path: { client: c.req.param("client") as string } });
const grant = (c: Context<AdminEnv>) => ({
  path: { client: c.req.param("client") as string, resource_key: c.req.param("resourceKey") as string },
});

export const clientOperations: ClientOperation[] = [
  {
    method: "get",
    path: "",
    call: (sdk, c) => sdk.GET("/api/v1/management/clients", { params: { query: queryOf(c) }, ...asText }),
  },
  {
    method: "post",
    path: "",
    takesBody: true,
    secret: true,
    call: (sdk, _c, body) => sdk.POST("/api/v1/management/clients", { body, ...rawJson }),
  },
  {
    method: "post",
    path: "/rotate-secret",
    takesBody: true,
    secret: true,
    call: (sdk, _c, body) => sdk.POST("/api/v1/management/clients/rotate-secret", { body, ...rawJson }),
  },
  {
    method: "get",
    path: "/:client",
    call: (sdk, c) => sdk.GET("/api/v1/management/clients/{client}", { params: client(c), ...asText }),
  },
  {
    method: "put",
    path: "/:client",
    takesBody: true,
    call: (sdk, c, body) =>
      sdk.PUT("/api/v1/management/clients/{client}", { params: client(c), body, ...rawJson }),
  },
  {
    method: "delete",
    path: "/:client",
    call: (sdk, c) => sdk.DELETE("/api/v1/management/clients/{client}", { params: client(c), ...asText }),
  },
  {
    method: "get",
    path: "/:client/oauth-grants",
    call: (sdk, c) =>
      sdk.GET("/api/v1/management/clients/{client}/oauth-grants", { params: client(c), ...asText }),
  },
  {
    method: "put",
    path: "/:client/oauth-grants/:resourceKey",
    takesBody: true,
    call: (sdk, c, body) =>
      sdk.PUT("/api/v1/management/clients/{client}/oauth-grants/{resource_key}", {
        params: grant(c),
        body,
        ...rawJson,
      }),
  },
  {
    method: "delete",
    path: "/:client/oauth-grants/:resourceKey",
    call: (sdk, c) =>
      sdk.DELETE("/api/v1/management/clients/{client}/oauth-grants/{resource_key}", {
        params: grant(c),
        ...asText,
      }),
  },
];

export function registerClientsProxy(app: Hono<AdminEnv>, deps: AdminDeps, fetchImpl: typeof fetch = fetch) {
  for (const operation of clientOperations) {
    app.on(operation.method.toUpperCase(), `${CLIENTS_PROXY_PATH}${operation.path}`, async (c) => {
      const token = accessTokenFor(c.get("session"), "admin-console");
      if (token === undefined) {
        return answerError(
          c,
          "auth.token_refused",
          "this account does not hold the client-admin role; client management is not offered",
        );
      }
      const sdk = managerClient(deps, c.get("requestId"), token, fetchImpl);
      // Read before the Manager is called: a body the limit refuses is a 413, not a Manager failure.
      const sent = (operation.takesBody ? await jsonText(c) : undefined) as never;
      let answer: ManagerAnswer;
      try {
        answer = await operation.call(sdk, c, sent);
      } catch (error) {
        deps.logger.warn("the Manager did not answer", { error: String(error) });
        return answerError(c, "dependency.manager_unavailable", "the Manager did not answer");
      }
      return answerFromManager(c, deps, answer, operation.secret === true);
    });
  }
}
