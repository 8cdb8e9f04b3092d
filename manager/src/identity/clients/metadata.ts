/**
 * OAuth clients as oidc-provider sees them: rows of oauth_clients (with their resources and
 * projects) mapped to client metadata. Only the shape is the provider's (a type).
 */
import type { AdapterPayload } from "oidc-provider";
import type { Sql } from "../../platform/db.ts";

/**
 * TJM's own client metadata, to be declared in the provider's `extraClientMetadata.properties`
 * (the provider drops metadata it was not told about).
 */
export const TJM_CLIENT_METADATA = [
  "first_party",
  "authorization_version",
  "authorization_changed_at",
  "resource_scopes",
  "project_ids",
  "previous_secret_hmac",
  "previous_secret_expires_at",
  "access_token_ttl",
  "roles",
  "user_ids",
  "directory_sources",
] as const;

interface ClientRow {
  clientId: string;
  clientSecretHmac: string | null;
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  responseTypes: string[];
  tokenEndpointAuthMethod: string;
  firstParty: boolean;
  backchannelLogoutUri: string | null;
  /** bigint: postgres.js returns it as a string. */
  authorizationVersion: string;
  /** Epoch seconds of the last change of the version; null: none since creation. */
  authorizationChangedAt: number | null;
  metadata: Record<string, unknown>;
  resourceScopes: Record<string, string[]>;
  projectIds: string[];
  previousSecretHmac: string | null;
  /** Epoch seconds; null without a secret in its grace window. */
  previousSecretExpiresAt: number | null;
  accessTokenTtlSeconds: number | null;
  roles: string[];
  userIds: string[];
  directorySources: string[];
}

/**
 * Metadata the columns decide: a `metadata` value under one of these names is ignored, so the
 * free-form column can never carry a plain `client_secret` or widen what the columns say.
 */
const COLUMN_METADATA = new Set<string>([
  "client_id",
  "client_secret",
  "client_name",
  "redirect_uris",
  "post_logout_redirect_uris",
  "grant_types",
  "response_types",
  "token_endpoint_auth_method",
  "backchannel_logout_uri",
  ...TJM_CLIENT_METADATA,
]);

export function clientMetadataFrom(row: ClientRow): AdapterPayload {
  const rest = Object.fromEntries(Object.entries(row.metadata).filter(([key]) => !COLUMN_METADATA.has(key)));
  return {
    ...rest,
    client_id: row.clientId,
    client_name: row.name,
    redirect_uris: row.redirectUris,
    post_logout_redirect_uris: row.postLogoutRedirectUris,
    grant_types: row.grantTypes,
    response_types: row.responseTypes as AdapterPayload["response_types"],
    token_endpoint_auth_method: row.tokenEndpointAuthMethod as AdapterPayload["token_endpoint_auth_method"],
    // The provider requires a client_secret for the client_secret_* methods; it gets the HMAC,
    // which only ever meets compareClientSecret below (symmetric algorithms stay disabled).
    ...(row.clientSecretHmac === null ? {} : { client_secret: row.clientSecretHmac }),
    // A client told of logouts is told which session ended (sid), not only which account.
    ...(row.backchannelLogoutUri === null
      ? {}
      : { backchannel_logout_uri: row.backchannelLogoutUri, backchannel_logout_session_required: true }),
    first_party: row.firstParty,
    authorization_version: Number(row.authorizationVersion),
    ...(row.authorizationChangedAt === null ? {} : { authorization_changed_at: row.authorizationChangedAt }),
    resource_scopes: row.resourceScopes,
    project_ids: row.projectIds,
    // The secret a rotation replaced, with the end of its grace window (compareClientSecret).
    ...(row.previousSecretHmac === null || row.previousSecretExpiresAt === null
      ? {}
      : {
          previous_secret_hmac: row.previousSecretHmac,
          previous_secret_expires_at: row.previousSecretExpiresAt,
        }),
    ...(row.accessTokenTtlSeconds === null ? {} : { access_token_ttl: row.accessTokenTtlSeconds }),
    // Empty users or sources: every account, every source; empty roles: no roles in its tokens.
    roles: row.roles,
    user_ids: row.userIds,
    directory_sources: row.directorySources,
  };
}

/**
 * The metadata of an enabled client; undefined for an unknown or disabled one. `deleted`: the
 * metadata of a deleted client instead (the back-channel logouts its deletion queued are signed
 * for it), never what the provider serves.
 */
export async function findClientMetadata(
  sql: Sql,
  clientId: string,
  deleted = false,
): Promise<AdapterPayload | undefined> {
  const [row] = await sql<ClientRow[]>`
    select c.client_id, c.client_secret_hmac, c.name, c.redirect_uris, c.post_logout_redirect_uris,
      c.grant_types, c.response_types, c.token_endpoint_auth_method, c.first_party,
      c.backchannel_logout_uri, c.authorization_version, c.metadata,
      extract(epoch from c.authorization_changed_at)::float8 as authorization_changed_at,
      coalesce(
        (select jsonb_object_agg(r.resource, r.scopes) from oauth_client_resources r where r.client_id = c.id),
        '{}'
      ) as resource_scopes,
      array(select p.project_id::text from oauth_client_projects p where p.client_id = c.id order by 1)
        as project_ids,
      c.previous_client_secret_hmac as previous_secret_hmac,
      case when c.previous_secret_expires_at > now()
        then extract(epoch from c.previous_secret_expires_at)::float8 end as previous_secret_expires_at,
      c.access_token_ttl_seconds,
      array(select r.role from oauth_client_roles r where r.client_id = c.id order by 1) as roles,
      array(select u.account_id::text from oauth_client_users u where u.client_id = c.id order by 1) as user_ids,
      array(select d.source from oauth_client_directory_sources d where d.client_id = c.id order by 1)
        as directory_sources
    from oauth_clients c
    where c.client_id = ${clientId}
      and ${deleted ? sql`c.deleted_at is not null` : sql`c.disabled_at is null`}`;
  return row && clientMetadataFrom(row);
}
