/**
 * Named components of client management (/api/v1/management/clients): a client's
 * representation, its definition as a body, its grants, the path parameter every route under
 * /clients/{client} takes, and the clients' rules' problems as a 400's details.
 */
import { z } from "@hono/zod-openapi";
import {
  ACCESS_TOKEN_TTL_BOUNDS,
  CLIENT_GRANT_TYPES,
  type ClientProblem,
  type ClientRecord,
  type RedirectUriRefusal,
} from "../identity/clients/index.ts";
import { DISPLAY_NAME_REFUSALS, displayNameRefusal } from "../identity/display-names.ts";
import { type ErrorDetail, validationError } from "../platform/errors.ts";

/** Visible ASCII: what a client reference or resource key is made of (never a control character). */
export const REFERENCE = /^[\x21-\x7e]+$/;
/**
 * Text without control characters (PostgreSQL refuses NUL; none belongs in a name or a URI): the
 * Cc class spelled out, since the document's pattern must read the same without the u flag.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is its purpose
export const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f]*$/;

const CLIENT_UUID_EXAMPLE = "3f0c2b8e-5d4a-4c1e-9b7f-2a6d8e1c4b90";
const CLIENT_ID_EXAMPLE = "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31";

/**
 * The one path parameter of every route under /clients/{client}: the client's UUID (`id`) or
 * its public `client_id`, whichever the caller has. The grant routes take the same.
 */
export const ClientParamsSchema = z.object({
  client: z
    .string()
    .min(1)
    .max(200)
    .regex(REFERENCE, "must be a client's UUID or client_id")
    .openapi({
      param: { name: "client", in: "path" },
      description: "The client's UUID (`id`) or its public `client_id`",
      example: CLIENT_ID_EXAMPLE,
    }),
});

export const ResourceKeyParamsSchema = ClientParamsSchema.extend({
  resource_key: z
    .string()
    .min(1)
    .max(200)
    .regex(REFERENCE, "must be a resource's audience")
    .openapi({
      param: { name: "resource_key", in: "path" },
      description:
        "The protected resource: its audience as access tokens name it (`aud`): the operations audience (OIDC_OPERATIONS_ADMIN_AUDIENCE), the tenant audience (OIDC_TENANT_AUDIENCE), `account-portal` or `admin-console`",
      example: "account-portal",
    }),
});

export const ClientTypeSchema = z.enum(["confidential", "public"]).openapi("ClientType", {
  description:
    "confidential: has a secret (client_secret_basic or client_secret_post); public: a browser or native app without one, always with PKCE",
});

export const ClientGrantTypeSchema = z.enum(CLIENT_GRANT_TYPES).openapi("ClientGrantType");

/** Enough for any real client; small enough that a refused body is still read before the answer. */
const UriListSchema = z
  .array(z.string().max(1000).regex(NO_CONTROL, "must not contain control characters"))
  .max(10);

/**
 * A client's or a developer app's name: the consent page shows it to people deciding whether to
 * trust the client, so it follows the display-name rules (something visible, no bidirectional
 * override), each refusal with its own detail code.
 */
export function clientNameSchema(example: string) {
  return z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(NO_CONTROL, "must not contain control characters")
    .superRefine((name, context) => {
      // An empty name is min(1)'s to report.
      const refusal = name === "" ? undefined : displayNameRefusal(name);
      if (refusal === undefined) return;
      const { code, message } = DISPLAY_NAME_REFUSALS[refusal];
      context.addIssue({ code: "custom", message, params: { detailCode: code } });
    })
    .openapi({
      description:
        "1 to 200 characters, trimmed, with something visible; no control characters and no bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069)",
      example,
    });
}

/** What a client's definition is made of: the body of a PUT, and (with type and resources) of a POST. */
const definitionShape = {
  name: clientNameSchema("Reports dashboard"),
  grantTypes: z
    .array(ClientGrantTypeSchema)
    .min(1)
    .max(3)
    .openapi({ example: ["authorization_code", "refresh_token"] }),
  redirectUris: UriListSchema.default([]).openapi({
    description:
      "Exact redirect URIs: absolute https, or http on a loopback address (localhost, 127.0.0.1, [::1]), written as the WHATWG URL parser writes them (lower-case host, a path, percent-encoded spaces); no userinfo, fragment or `*`. Required with authorization_code, refused without it",
    example: ["https://reports.example.com/callback"],
  }),
  postLogoutRedirectUris: UriListSchema.default([]).openapi({
    description: "Where the provider may send a browser after logout; the same rules as redirectUris",
    example: ["https://reports.example.com/"],
  }),
  backchannelLogoutUri: z
    .string()
    .max(1000)
    .regex(NO_CONTROL, "must not contain control characters")
    .nullable()
    .default(null)
    .openapi({
      description: "Where the provider POSTs back-channel logout tokens; the same rules as redirectUris",
      example: "https://reports.example.com/backchannel-logout",
    }),
  firstParty: z.boolean().default(false).openapi({
    description: "A first-party client skips the consent prompt (TJM's own Admin console and account portal)",
    example: false,
  }),
  projectIds: z
    .array(z.string().max(64).regex(REFERENCE, "must be a project id"))
    .max(100)
    .default([])
    .openapi({
      description:
        "The projects a client_credentials client acts for (its tenant tokens' tjm_projects claim)",
      example: [],
    }),
  accessTokenTtlSeconds: z
    .number()
    .int()
    .nullable()
    .default(null)
    .openapi({
      description: `The lifetime of its access tokens, ${ACCESS_TOKEN_TTL_BOUNDS.min}..${ACCESS_TOKEN_TTL_BOUNDS.max} seconds and never above PROVIDER_ACCESS_TOKEN_TTL_SECONDS; null: the installation's`,
      example: 300,
    }),
};

export const ClientUpdateSchema = z.object(definitionShape).openapi("ClientUpdate");

export const ClientCreateSchema = z
  .object({
    ...definitionShape,
    type: ClientTypeSchema,
    resources: z
      .array(z.string().max(200).regex(REFERENCE, "must be a resource's audience"))
      .max(4)
      .default([])
      .openapi({
        description:
          "Resources granted at creation (without extra scopes); later changes go through oauth-grants",
        example: ["account-portal"],
      }),
  })
  .openapi("ClientCreate");

export const ClientSchema = z
  .object({
    id: z.uuid().openapi({ example: CLIENT_UUID_EXAMPLE }),
    clientId: z.string().openapi({ description: "The public client_id", example: CLIENT_ID_EXAMPLE }),
    name: z.string().openapi({ example: "Reports dashboard" }),
    type: ClientTypeSchema,
    grantTypes: z.array(z.string()).openapi({ example: ["authorization_code", "refresh_token"] }),
    responseTypes: z.array(z.string()).openapi({ example: ["code"] }),
    redirectUris: z.array(z.string()).openapi({ example: ["https://reports.example.com/callback"] }),
    postLogoutRedirectUris: z.array(z.string()).openapi({ example: ["https://reports.example.com/"] }),
    backchannelLogoutUri: z.string().nullable().openapi({ example: null }),
    firstParty: z.boolean().openapi({ example: false }),
    ownerAccountId: z.uuid().nullable().openapi({
      description: "The account owning a developer app; null for an installation's client",
      example: null,
    }),
    projectIds: z.array(z.string()).openapi({ example: [] }),
    resources: z.array(z.string()).openapi({
      description: "The resources it holds a grant for (GET …/oauth-grants has their scopes)",
      example: ["account-portal"],
    }),
    accessTokenTtlSeconds: z.number().int().nullable().openapi({ example: null }),
    authorizationVersion: z.number().int().openapi({
      description: "Bumped by every change of a live grant; tokens issued under an older one are refused",
      example: 3,
    }),
    secretRotatedAt: z.iso.datetime().nullable().openapi({ example: "2026-11-27T10:00:00.000Z" }),
    previousSecretExpiresAt: z.iso.datetime().nullable().openapi({
      description:
        "Until when the secret replaced by the last rotation still authenticates; null: it does not",
      example: null,
    }),
    createdAt: z.iso.datetime().openapi({ example: "2026-11-20T08:30:00.000Z" }),
    updatedAt: z.iso.datetime().openapi({ example: "2026-11-27T10:00:00.000Z" }),
  })
  .openapi("Client");

export const ClientListSchema = z
  .object({
    items: z.array(ClientSchema),
    total: z.number().int().openapi({ description: "Clients matching the filters", example: 1 }),
    limit: z.number().int().openapi({ example: 50 }),
    offset: z.number().int().openapi({ example: 0 }),
  })
  .openapi("ClientList");

export const ClientWithSecretSchema = ClientSchema.extend({
  clientSecret: z.string().nullable().openapi({
    description: "Shown once, never again (stored only as its HMAC); null for a public client",
    example: "tjm_cs_Q2h4b3J0LXNlY3JldC1leGFtcGxlLW9ubHktNDMtY2hhcnM",
  }),
}).openapi("ClientWithSecret");

export const ClientGrantSchema = z
  .object({
    resource: z
      .string()
      .openapi({ description: "The resource_key (an audience)", example: "account-portal" }),
    scopes: z.array(z.string()).openapi({
      description: "Scopes beyond `access` its tokens for the resource may carry",
      example: [],
    }),
    grantedAt: z.iso.datetime().openapi({ example: "2026-11-27T10:00:00.000Z" }),
  })
  .openapi("ClientGrant");

export function toClient(record: ClientRecord) {
  return {
    id: record.id,
    clientId: record.clientId,
    name: record.name,
    type: record.public ? ("public" as const) : ("confidential" as const),
    grantTypes: record.grantTypes,
    responseTypes: record.responseTypes,
    redirectUris: record.redirectUris,
    postLogoutRedirectUris: record.postLogoutRedirectUris,
    backchannelLogoutUri: record.backchannelLogoutUri,
    firstParty: record.firstParty,
    ownerAccountId: record.ownerAccountId,
    projectIds: record.projectIds,
    resources: record.resources,
    accessTokenTtlSeconds: record.accessTokenTtlSeconds,
    authorizationVersion: Number(record.authorizationVersion),
    secretRotatedAt: record.secretRotatedAt?.toISOString() ?? null,
    previousSecretExpiresAt: record.previousSecretExpiresAt?.toISOString() ?? null,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

const REFUSALS: Record<Exclude<RedirectUriRefusal, "not-canonical">, string> = {
  "not-absolute": "is not an absolute URI",
  malformed: "is not a URL (the WHATWG URL parser refuses it)",
  userinfo: "has userinfo (a user name or password before the host)",
  fragment: "has a fragment",
  wildcard: "has a * (redirect URIs match exactly, without wildcards)",
  "not-https": "is neither https nor http on a loopback address",
};

/** The refusal in words; a URI the parser rewrites names the form to register instead. */
function redirectUriMessage(uri: string, refusal: RedirectUriRefusal): string {
  if (refusal === "not-canonical")
    return `'${uri}' is read by URL parsers as '${URL.parse(uri)?.href}': register exactly that`;
  return `'${uri}' ${REFUSALS[refusal]}`;
}

/** Each problem at the path of the body field it is about, with its own detail code. */
export function problemDetail(problem: ClientProblem): ErrorDetail {
  switch (problem.code) {
    case "client.redirect_uri_invalid":
      return {
        path: problem.field,
        message: redirectUriMessage(problem.uri, problem.refusal),
        code: problem.code,
      };
    case "client.grant_type_unknown":
      return {
        path: "grantTypes",
        message: `'${problem.grantType}' is not a grant type`,
        code: problem.code,
      };
    case "client.redirect_uri_required":
      return { path: "redirectUris", message: "authorization_code needs a redirect URI", code: problem.code };
    case "client.redirect_uri_without_code_grant":
      return { path: "redirectUris", message: "redirect URIs need authorization_code", code: problem.code };
    case "client.logout_uri_without_code_grant":
      return {
        path: "postLogoutRedirectUris",
        message: "logout URIs need authorization_code",
        code: problem.code,
      };
    case "client.refresh_without_code_grant":
      return { path: "grantTypes", message: "refresh_token needs authorization_code", code: problem.code };
    case "client.resource_unknown":
      return {
        path: "resources",
        message: `'${problem.resource}' is not one of ${problem.known.join(", ")}`,
        code: problem.code,
      };
    case "client.project_id_invalid":
      return { path: "projectIds", message: `'${problem.projectId}' is not a UUID`, code: problem.code };
    case "client.projects_need_client_credentials":
      return { path: "projectIds", message: "projects need client_credentials", code: problem.code };
    case "client.public_client_credentials":
      return {
        path: "grantTypes",
        message: "a public client cannot use client_credentials",
        code: problem.code,
      };
    case "client.access_token_ttl_out_of_range":
      return {
        path: "accessTokenTtlSeconds",
        message: `must be ${ACCESS_TOKEN_TTL_BOUNDS.min}..${ACCESS_TOKEN_TTL_BOUNDS.max}`,
        code: problem.code,
      };
  }
}

export function problemsError(problems: readonly ClientProblem[]) {
  return validationError(problems.map(problemDetail));
}
