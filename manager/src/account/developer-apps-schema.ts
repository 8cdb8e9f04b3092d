/**
 * Named components of the portal's developer apps (/api/v1/me/developer-apps): an app's
 * representation and body, and the developer-app rules' problems as a 400's details.
 */
import { z } from "@hono/zod-openapi";
import {
  type ClientProblem,
  type ClientRecord,
  DEVELOPER_APP_SCOPES,
  DEVELOPER_APPS_PER_ACCOUNT,
  DeveloperAppLimitError,
  type DeveloperAppProblem,
  defineClient,
  developerAppMetadata,
  developerAppProblems,
} from "../identity/clients/index.ts";
import { clientNameSchema, NO_CONTROL, problemDetail, REFERENCE } from "../management/schema.ts";
import { type ErrorDetail, validationError } from "../platform/errors.ts";

const CLIENT_ID_EXAMPLE = "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31";

export const DeveloperAppParamsSchema = z.object({
  client: z
    .string()
    .min(1)
    .max(200)
    .regex(REFERENCE, "must be an app's UUID or client_id")
    .openapi({
      param: { name: "client", in: "path" },
      description: "The app's UUID (`id`) or its public `client_id`; another account's app is 404",
      example: CLIENT_ID_EXAMPLE,
    }),
});

/** A developer app needs a few redirect URIs of ordinary length. */
const UriListSchema = z
  .array(z.string().max(500).regex(NO_CONTROL, "must not contain control characters"))
  .max(5);

export const DeveloperAppBodySchema = z
  .object({
    name: clientNameSchema("My reading list"),
    type: z.enum(["confidential", "public"]).openapi({
      description: "confidential: a server-side app with a secret; public: a browser or native app (PKCE)",
      example: "confidential",
    }),
    applicationType: z.enum(["web", "native"]).default("web").openapi({
      description: "web: https redirect URIs only; native: https or http on a loopback address",
      example: "web",
    }),
    grantTypes: z
      .array(z.string().max(50))
      .min(1)
      .max(3)
      .default(["authorization_code"])
      .openapi({
        description: "authorization_code, optionally refresh_token; client_credentials is refused",
        example: ["authorization_code", "refresh_token"],
      }),
    redirectUris: UriListSchema.min(1).openapi({
      description:
        "Exact redirect URIs, written as the WHATWG URL parser writes them (lower-case host, a path, percent-encoded spaces); no userinfo, fragment or `*`",
      example: ["https://app.example.com/callback"],
    }),
    postLogoutRedirectUris: UriListSchema.default([]).openapi({
      description: "The same rules as redirectUris",
      example: [],
    }),
    scopes: z
      .array(z.string().max(100))
      .max(10)
      .default([...DEVELOPER_APP_SCOPES])
      .openapi({
        description: "A subset of openid profile email; any other is refused",
        example: ["openid", "email"],
      }),
    firstParty: z.boolean().default(false).openapi({
      description: "Always false: a developer app's users always see the consent page",
      example: false,
    }),
    resources: z
      .array(z.string().max(200).regex(NO_CONTROL, "must not contain control characters"))
      .max(4)
      .default([])
      .openapi({
        description:
          "Always empty: a developer app gets no TJM resource (operations, tenant, account-portal, admin-console)",
        example: [],
      }),
  })
  .openapi("DeveloperAppBody");

export const DeveloperAppSchema = z
  .object({
    id: z.uuid().openapi({ example: "3f0c2b8e-5d4a-4c1e-9b7f-2a6d8e1c4b90" }),
    clientId: z.string().openapi({ example: CLIENT_ID_EXAMPLE }),
    name: z.string().openapi({ example: "My reading list" }),
    type: z.enum(["confidential", "public"]),
    applicationType: z.enum(["web", "native"]),
    grantTypes: z.array(z.string()).openapi({ example: ["authorization_code", "refresh_token"] }),
    redirectUris: z.array(z.string()).openapi({ example: ["https://app.example.com/callback"] }),
    postLogoutRedirectUris: z.array(z.string()).openapi({ example: [] }),
    scopes: z.array(z.string()).openapi({ example: ["openid", "profile", "email"] }),
    secretRotatedAt: z.iso.datetime().nullable().openapi({ example: null }),
    previousSecretExpiresAt: z.iso.datetime().nullable().openapi({ example: null }),
    createdAt: z.iso.datetime().openapi({ example: "2026-11-27T10:00:00.000Z" }),
    updatedAt: z.iso.datetime().openapi({ example: "2026-11-27T10:00:00.000Z" }),
  })
  .openapi("DeveloperApp");

export const DeveloperAppWithSecretSchema = DeveloperAppSchema.extend({
  clientSecret: z.string().nullable().openapi({
    description: "Shown once (stored only as its HMAC); null for a public app",
    example: "tjm_cs_Q2h4b3J0LXNlY3JldC1leGFtcGxlLW9ubHktNDMtY2hhcnM",
  }),
}).openapi("DeveloperAppWithSecret");

export const DeveloperAppListSchema = z
  .object({
    apps: z.array(DeveloperAppSchema),
    limit: z.number().int().openapi({ example: DEVELOPER_APPS_PER_ACCOUNT }),
  })
  .openapi("DeveloperAppList");

export function toDeveloperApp(record: ClientRecord) {
  const scope =
    typeof record.metadata.scope === "string" ? record.metadata.scope : DEVELOPER_APP_SCOPES.join(" ");
  return {
    id: record.id,
    clientId: record.clientId,
    name: record.name,
    type: record.public ? ("public" as const) : ("confidential" as const),
    applicationType: record.metadata.application_type === "native" ? ("native" as const) : ("web" as const),
    grantTypes: record.grantTypes,
    redirectUris: record.redirectUris,
    postLogoutRedirectUris: record.postLogoutRedirectUris,
    scopes: scope.split(" "),
    secretRotatedAt: record.secretRotatedAt?.toISOString() ?? null,
    previousSecretExpiresAt: record.previousSecretExpiresAt?.toISOString() ?? null,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

function developerAppDetail(problem: DeveloperAppProblem): ErrorDetail {
  switch (problem.code) {
    case "developer.scope_not_allowed":
      return {
        path: "scopes",
        message: `'${problem.scope}' is not one of openid, profile, email`,
        code: problem.code,
      };
    case "developer.first_party_not_allowed":
      return { path: "firstParty", message: "a developer app is never first-party", code: problem.code };
    case "developer.resource_not_allowed":
      return {
        path: "resources",
        message: `'${problem.resource}': a developer app gets no TJM resource`,
        code: problem.code,
      };
    case "developer.client_credentials_not_allowed":
      return {
        path: "grantTypes",
        message: "a developer app cannot use client_credentials",
        code: problem.code,
      };
    case "developer.redirect_uri_not_https":
      return {
        path: problem.field,
        message: `'${problem.uri}' is not https (a web app's URIs must be)`,
        code: problem.code,
      };
  }
}

type DeveloperAppBody = z.infer<typeof DeveloperAppBodySchema>;

/**
 * The body judged by the developer-app rules and the clients' own: the definition and the
 * metadata the provider enforces, or a 400 listing every problem with its code.
 */
export function defineDeveloperApp(body: DeveloperAppBody) {
  const problems: ErrorDetail[] = developerAppProblems({ ...body, public: body.type === "public" }).map(
    developerAppDetail,
  );
  const defined = defineClient(
    {
      name: body.name,
      redirectUris: body.redirectUris,
      postLogoutRedirectUris: body.postLogoutRedirectUris,
      backchannelLogoutUri: undefined,
      grantTypes: body.grantTypes,
      resources: [],
      projectIds: [],
      firstParty: false,
      public: body.type === "public",
    },
    new Set(),
  );
  if (!defined.ok) {
    // client_credentials is the developer-app rule's to name; the clients' rule would repeat it.
    const repeated = new Set<ClientProblem["code"]>(["client.public_client_credentials"]);
    problems.push(...defined.problems.filter((problem) => !repeated.has(problem.code)).map(problemDetail));
  }
  if (problems.length > 0 || !defined.ok) throw validationError(problems);
  return { definition: defined.value, metadata: developerAppMetadata(body.applicationType, body.scopes) };
}

export function limitError(err: unknown): unknown {
  return err instanceof DeveloperAppLimitError
    ? validationError([
        {
          path: "",
          message: `an account has at most ${DEVELOPER_APPS_PER_ACCOUNT} developer apps`,
          code: "developer.limit_reached",
        },
      ])
    : err;
}
