/**
 * `/api/management/clients…`: client management (the Manager's /api/v1/management/clients…) for
 * an account holding the client-admin role, with the session's admin-console token, through the
 * generated SDK. A session without that token is refused here with 403, the Manager not asked
 * (as the operations proxy does without an operations token). Answers showing a secret (a
 * created client, a rotation) are `no-store`.
 */
import type { Context, Hono } from "hono";
import type { AdminDeps, AdminEnv } from "../platform/context.ts";
import { asText, type ForwardedOperation, queryOf, rawJson, registerForwarding } from "./routes.ts";

export const CLIENTS_PROXY_PATH = "/api/management/clients";

const client = (c: Context<AdminEnv>) => ({ path: { client: c.req.param("client") as string } });
const grant = (c: Context<AdminEnv>) => ({
  path: { client: c.req.param("client") as string, resource_key: c.req.param("resourceKey") as string },
});

export const clientOperations: ForwardedOperation[] = [
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
  registerForwarding(
    app,
    deps,
    {
      basePath: CLIENTS_PROXY_PATH,
      operations: clientOperations,
      resource: "admin-console",
      refusal: "this account does not hold the client-admin role; client management is not offered",
    },
    fetchImpl,
  );
}
