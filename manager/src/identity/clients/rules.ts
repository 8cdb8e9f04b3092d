/**
 * What makes a client definition acceptable, whoever defines it (the command line today, client
 * management later): redirect URIs, grant and response types that agree, known resources, and
 * project bindings only where tokens can carry them. Pure; each problem is typed, and its words
 * are the caller's (a flag on the command line, a field in a request body).
 */

export const CLIENT_GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials"] as const;

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export type RedirectUriRefusal =
  | "not-absolute"
  | "malformed"
  | "userinfo"
  | "fragment"
  | "wildcard"
  | "not-canonical"
  | "not-https";

/**
 * The provider matches a redirect URI exactly, as a string, while browsers and client libraries
 * read it with the WHATWG URL parser: a URI the parser writes differently (`https:/a.example/cb`,
 * a space, an upper-case host) is not the string the client will send, or not the place it seems
 * to name. So a redirect URI is absolute and already the parser's own serialisation; https, or
 * http on the loopback interface only (RFC 8252 §7.3); without a fragment (RFC 6749 §3.1.2);
 * without userinfo (`https://a.example@evil.example/` goes to evil.example); and without `*`
 * (matching has no wildcards, and none may be read into it).
 */
export function redirectUriRefusal(uri: string): RedirectUriRefusal | undefined {
  const url = URL.parse(uri);
  if (url === null) return URL.canParse(uri, "https://base.invalid/") ? "not-absolute" : "malformed";
  if (url.username !== "" || url.password !== "") return "userinfo";
  if (url.hash !== "" || uri.includes("#")) return "fragment";
  if (uri.includes("*")) return "wildcard";
  if (url.href !== uri) return "not-canonical";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return "not-https";
}

/** The URIs a client registers, each under the redirect rules. */
export type ClientUriField = "redirectUris" | "postLogoutRedirectUris" | "backchannelLogoutUri";

export type ClientProblem =
  | { code: "client.redirect_uri_invalid"; field: ClientUriField; uri: string; refusal: RedirectUriRefusal }
  | { code: "client.grant_type_unknown"; grantType: string }
  | { code: "client.redirect_uri_required" }
  | { code: "client.redirect_uri_without_code_grant" }
  | { code: "client.logout_uri_without_code_grant" }
  | { code: "client.refresh_without_code_grant" }
  | { code: "client.resource_unknown"; resource: string; known: string[] }
  | { code: "client.project_id_invalid"; projectId: string }
  | { code: "client.projects_need_client_credentials" }
  | { code: "client.public_client_credentials" }
  | { code: "client.access_token_ttl_out_of_range"; seconds: number };

/**
 * Bounds of a client's own access-token lifetime: never longer than the installation allows
 * (PROVIDER_ACCESS_TOKEN_TTL_SECONDS tops at 600), never so short a token expires in transit.
 */
export const ACCESS_TOKEN_TTL_BOUNDS = { min: 30, max: 600 } as const;

export interface ClientProposal {
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string | undefined;
  grantTypes: string[];
  resources: string[];
  projectIds: string[];
  firstParty: boolean;
  /** A public client (a browser or native app) has no secret and must use PKCE. */
  public: boolean;
  /** The client's access-token lifetime; undefined: the installation's. */
  accessTokenTtlSeconds?: number | undefined;
}

export interface ClientDefinition extends ClientProposal {
  responseTypes: string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The definition, with what follows from the proposal (response types, project ids in their
 * stored case), or every problem in a stable order. `resources`: every resource a client may be
 * granted (the configured audiences and the fixed ones).
 */
export function defineClient(
  proposal: ClientProposal,
  resources: ReadonlySet<string>,
): { ok: true; value: ClientDefinition } | { ok: false; problems: ClientProblem[] } {
  const problems: ClientProblem[] = [];
  const uris: [ClientUriField, string[]][] = [
    ["redirectUris", proposal.redirectUris],
    ["postLogoutRedirectUris", proposal.postLogoutRedirectUris],
    [
      "backchannelLogoutUri",
      proposal.backchannelLogoutUri === undefined ? [] : [proposal.backchannelLogoutUri],
    ],
  ];
  for (const [field, list] of uris) {
    for (const uri of list) {
      const refusal = redirectUriRefusal(uri);
      if (refusal) problems.push({ code: "client.redirect_uri_invalid", field, uri, refusal });
    }
  }
  const { grantTypes } = proposal;
  for (const grantType of grantTypes) {
    if (!(CLIENT_GRANT_TYPES as readonly string[]).includes(grantType))
      problems.push({ code: "client.grant_type_unknown", grantType });
  }
  const interactive = grantTypes.includes("authorization_code");
  if (interactive && proposal.redirectUris.length === 0)
    problems.push({ code: "client.redirect_uri_required" });
  if (!interactive && proposal.redirectUris.length > 0)
    problems.push({ code: "client.redirect_uri_without_code_grant" });
  if (
    !interactive &&
    (proposal.postLogoutRedirectUris.length > 0 || proposal.backchannelLogoutUri !== undefined)
  )
    problems.push({ code: "client.logout_uri_without_code_grant" });
  if (grantTypes.includes("refresh_token") && !interactive)
    problems.push({ code: "client.refresh_without_code_grant" });
  for (const resource of proposal.resources) {
    if (!resources.has(resource))
      problems.push({ code: "client.resource_unknown", resource, known: [...resources] });
  }
  for (const projectId of proposal.projectIds) {
    if (!UUID.test(projectId)) problems.push({ code: "client.project_id_invalid", projectId });
  }
  if (proposal.projectIds.length > 0 && !grantTypes.includes("client_credentials"))
    problems.push({ code: "client.projects_need_client_credentials" });
  if (proposal.public && grantTypes.includes("client_credentials"))
    problems.push({ code: "client.public_client_credentials" });
  const ttl = proposal.accessTokenTtlSeconds;
  if (
    ttl !== undefined &&
    (!Number.isInteger(ttl) || ttl < ACCESS_TOKEN_TTL_BOUNDS.min || ttl > ACCESS_TOKEN_TTL_BOUNDS.max)
  )
    problems.push({ code: "client.access_token_ttl_out_of_range", seconds: ttl });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: {
      ...proposal,
      responseTypes: interactive ? ["code"] : [],
      projectIds: proposal.projectIds.map((id) => id.toLowerCase()),
    },
  };
}
