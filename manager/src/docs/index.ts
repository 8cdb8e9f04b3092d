import type { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv } from "../platform/http.ts";

export const OPENAPI_PATH = "/api/v1/openapi.json";
const SCALAR_BUNDLE_PATH = "/api/docs/scalar.js";

export const openApiInfo = {
  openapi: "3.1.0",
  info: {
    title: "TJM — Transcoding Job Manager",
    version: "1.0.0",
    description:
      "Control plane for distributed media transcoding. Operator routes need `authorization: Bearer <JWT>` whose audience includes the configured operations audience.",
    license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    contact: { name: "TJM maintainers" },
  },
  servers: [
    {
      url: "http://127.0.0.1:8080",
      description:
        "A Manager on its default port; use your installation's origin (the Manager or its gateway)",
    },
  ],
};

/**
 * Serves the OpenAPI document (built once, after every route is registered) and Scalar.
 * Scalar's bundle comes from the installed package, never a CDN, so docs work offline.
 */
export function registerDocs(app: OpenAPIHono<AppEnv>, scalarBundle: () => Promise<Uint8Array>) {
  app.openAPIRegistry.registerComponent("securitySchemes", "operatorBearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "OIDC access token whose audience includes OIDC_OPERATIONS_ADMIN_AUDIENCE, issued by TJM's provider (OIDC_ISSUER_URL; the account must hold the operator role, else 403, and its client, account and sign-in session must still stand, else 401) or by the external operator issuer (OIDC_OPERATOR_ISSUER_URL)",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "tenantBearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "OIDC access token of TJM's provider (OIDC_ISSUER_URL; client_credentials) whose audience includes OIDC_TENANT_AUDIENCE and whose tjm_projects claim (the project ids its client is bound to) lists the project in the path",
  });
  let document: unknown;
  app.get(OPENAPI_PATH, (c) => {
    document ??= app.getOpenAPI31Document(openApiInfo);
    return c.json(document);
  });
  let bundle: Promise<Uint8Array> | undefined;
  app.get(SCALAR_BUNDLE_PATH, async (c) => {
    bundle ??= scalarBundle();
    c.header("content-type", "application/javascript; charset=utf-8");
    c.header("cache-control", "public, max-age=86400");
    return c.body((await bundle) as Uint8Array<ArrayBuffer>);
  });
  app.get(
    "/api/docs",
    Scalar({ url: OPENAPI_PATH, cdn: SCALAR_BUNDLE_PATH, pageTitle: "TJM API", withDefaultFonts: false }),
  );
}
