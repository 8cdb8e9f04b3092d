import type { OpenAPIHono } from "@hono/zod-openapi";
import { type PageSources, pageHeaders } from "@tjm/platform/page-headers";
import type { AppEnv } from "../platform/http.ts";

export const OPENAPI_PATH = "/api/v1/openapi.json";
export const DOCS_PATH = "/api/docs";
const SCALAR_BUNDLE_PATH = "/api/docs/scalar.js";
const SCALAR_START_PATH = "/api/docs/start.js";

/**
 * Scalar started by a script file rather than the inline script its Hono middleware writes, so
 * the page allows no inline script at all.
 */
const SCALAR_START = `Scalar.createApiReference("#app", ${JSON.stringify({ url: OPENAPI_PATH, withDefaultFonts: false })});\n`;

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>TJM API</title>
</head>
<body>
<div id="app"></div>
<script src="${SCALAR_BUNDLE_PATH}"></script>
<script src="${SCALAR_START_PATH}"></script>
</body>
</html>
`;

/**
 * What Scalar needs, checked in Chromium (tests/security/page-headers.test.ts): its two scripts
 * from here, the document and "try it" requests to this origin, and styles it injects at run
 * time (style elements and attributes, hence 'unsafe-inline' for styles only, never scripts).
 */
const DOCS_SOURCES: PageSources = {
  script: ["'self'"],
  style: ["'self'", "'unsafe-inline'"],
  img: ["'self'", "data:"],
  font: ["'self'", "data:"],
  connect: ["'self'"],
};

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

/** The bearer scheme of each audience; the document names those some route uses. */
const SECURITY_SCHEMES = {
  operatorBearer: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "OIDC access token whose audience includes OIDC_OPERATIONS_ADMIN_AUDIENCE, issued by TJM's provider (OIDC_ISSUER_URL; the account must hold the operator role, else 403, and its client, account and sign-in session must still stand, else 401) or by the external operator issuer (OIDC_OPERATOR_ISSUER_URL)",
  },
  tenantBearer: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "OIDC access token of TJM's provider (OIDC_ISSUER_URL; client_credentials) whose audience includes OIDC_TENANT_AUDIENCE and whose tjm_projects claim (the project ids its client is bound to) lists the project in the path",
  },
  accountBearer: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "OIDC access token of TJM's provider whose audience includes account-portal, issued to an account through the authorization-code flow (its subject is the account); its client, account, sign-in session and grant must still stand, else 401; a client's own token is refused (403)",
  },
  clientAdminBearer: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "OIDC access token of TJM's provider whose audience includes admin-console, issued to an account that holds the client-admin role (else 403); its client, account, sign-in session and grant must still stand, else 401",
  },
} as const;

/**
 * Serves the OpenAPI document (built once, after every route is registered) and Scalar.
 * Scalar's bundle comes from the installed package, never a CDN, so docs work offline.
 */
export function registerDocs(app: OpenAPIHono<AppEnv>, scalarBundle: () => Promise<Uint8Array>) {
  // A scheme no route names would be an unused component (the account and client-admin
  // audiences have no routes until the account portal and client management land).
  const used = new Set(
    app.openAPIRegistry.definitions.flatMap((definition) =>
      definition.type === "route" ? (definition.route.security ?? []).flatMap(Object.keys) : [],
    ),
  );
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) {
    if (used.has(name)) app.openAPIRegistry.registerComponent("securitySchemes", name, scheme);
  }
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
  app.get(SCALAR_START_PATH, (c) => {
    c.header("content-type", "application/javascript; charset=utf-8");
    return c.body(SCALAR_START);
  });
  app.get(DOCS_PATH, (c) => c.html(DOCS_PAGE, 200, pageHeaders(DOCS_SOURCES)));
}
