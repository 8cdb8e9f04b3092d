/**
 * Client management's queries: listing and reading clients, replacing a definition, deleting,
 * rotating a secret with a grace window, and the client's grants (oauth_client_resources, the
 * one table behind both the grant routes and the nested resources routes). Each change is one
 * transaction with its audit row; every change of a live grant (and of the projects a tenant
 * token carries) bumps the client's authorization_version in that transaction, so every token
 * issued before is refused from the next request on, on every replica.
 */
import type { Sql, TransactionSql as Tx } from "../../platform/db.ts";
import { type AuditDetails, writeAuditEvent } from "../audit.ts";
import { endClientAuthorizationIn } from "../sessions/end.ts";
import { checkDeveloperAppLimit } from "./developer-apps.ts";
import type { ClientDefinition } from "./rules.ts";
import { generateClientSecret, hashClientSecret } from "./secrets.ts";
import { UnknownProjectError } from "./store.ts";

/** Who changes a client: an account (an administrator, or a developer for their own app). */
export interface ClientActor {
  accountId: string;
  /** Only this account's own clients (developer apps); undefined: any client (client-admin). */
  ownClientsOf?: string | undefined;
}

export class ClientNotFoundError extends Error {}
/** A public client has no secret to rotate. */
export class PublicClientError extends Error {}
/** The client holds no grant for the resource. */
export class GrantNotFoundError extends Error {}

export interface ClientRecord {
  id: string;
  clientId: string;
  name: string;
  public: boolean;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string | null;
  grantTypes: string[];
  responseTypes: string[];
  firstParty: boolean;
  ownerAccountId: string | null;
  accessTokenTtlSeconds: number | null;
  /** bigint as text (postgres.js). */
  authorizationVersion: string;
  projectIds: string[];
  resources: string[];
  secretRotatedAt: Date | null;
  previousSecretExpiresAt: Date | null;
  /** The provider's other client metadata (a developer app's scope and application_type). */
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface ClientFilter {
  /** Case-insensitive substring of the name. */
  name?: string | undefined;
  type?: "confidential" | "public" | undefined;
  grantType?: string | undefined;
  firstParty?: boolean | undefined;
  ownerAccountId?: string | undefined;
  createdFrom?: Date | undefined;
  createdBefore?: Date | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function columns(sql: Sql | Tx) {
  return sql`
    c.id::text, c.client_id, c.name, c.client_secret_hmac is null as public, c.redirect_uris,
    c.post_logout_redirect_uris, c.backchannel_logout_uri, c.grant_types, c.response_types,
    c.first_party, c.owner_account_id::text, c.access_token_ttl_seconds,
    c.authorization_version::text, c.secret_rotated_at, c.metadata,
    case when c.previous_secret_expires_at > now() then c.previous_secret_expires_at end
      as previous_secret_expires_at,
    c.created_at, c.updated_at,
    array(select p.project_id::text from oauth_client_projects p where p.client_id = c.id order by 1)
      as project_ids,
    array(select r.resource from oauth_client_resources r where r.client_id = c.id order by 1) as resources`;
}

function filterCondition(sql: Sql, filter: ClientFilter) {
  const like = filter.name === undefined ? null : `%${filter.name.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
  return sql`
    c.deleted_at is null
    and (${like}::text is null or c.name ilike ${like})
    and (${filter.type ?? null}::text is null
      or (c.client_secret_hmac is null) = (${filter.type ?? null}::text = 'public'))
    and (${filter.grantType ?? null}::text is null or ${filter.grantType ?? null} = any(c.grant_types))
    and (${filter.firstParty ?? null}::boolean is null or c.first_party = ${filter.firstParty ?? null})
    and (${filter.ownerAccountId ?? null}::uuid is null or c.owner_account_id = ${filter.ownerAccountId ?? null})
    and (${filter.createdFrom ?? null}::timestamptz is null or c.created_at >= ${filter.createdFrom ?? null})
    and (${filter.createdBefore ?? null}::timestamptz is null or c.created_at < ${filter.createdBefore ?? null})`;
}

/** Oldest first, ties by id: a page never repeats or skips a client however many have equal times. */
export async function listClients(
  sql: Sql,
  filter: ClientFilter,
  limit: number,
  offset: number,
): Promise<{ items: ClientRecord[]; total: number }> {
  const [items, [count]] = await Promise.all([
    sql<ClientRecord[]>`
      select ${columns(sql)} from oauth_clients c where ${filterCondition(sql, filter)}
      order by c.created_at, c.id limit ${limit} offset ${offset}`,
    sql<
      { total: number }[]
    >`select count(*)::int as total from oauth_clients c where ${filterCondition(sql, filter)}`,
  ]);
  return { items, total: (count as { total: number }).total };
}

/** `reference`: the client's UUID (`id`) or its public `client_id`; a deleted client is not found. */
function referenceCondition(sql: Sql | Tx, reference: string, actor?: ClientActor) {
  const byId = UUID.test(reference) ? sql`c.id = ${reference}::uuid or` : sql``;
  const owner =
    actor?.ownClientsOf === undefined ? sql`` : sql`and c.owner_account_id = ${actor.ownClientsOf}`;
  return sql`(${byId} c.client_id = ${reference}) and c.deleted_at is null ${owner}`;
}

export async function findClient(sql: Sql, reference: string, actor?: ClientActor): Promise<ClientRecord> {
  const [row] = await sql<ClientRecord[]>`
    select ${columns(sql)} from oauth_clients c where ${referenceCondition(sql, reference, actor)}
    order by (c.id::text = lower(${reference})) desc limit 1`;
  if (!row) throw new ClientNotFoundError("no such client");
  return row;
}

/** The client row locked for a change: its id, public client_id, and whether it is public. */
async function lockClient(tx: Tx, reference: string, actor?: ClientActor) {
  const [row] = await tx<{ id: string; clientId: string; public: boolean; projectIds: string[] }[]>`
    select c.id::text, c.client_id, c.client_secret_hmac is null as public,
      array(select p.project_id::text from oauth_client_projects p where p.client_id = c.id order by 1)
        as project_ids
    from oauth_clients c where ${referenceCondition(tx, reference, actor)}
    order by (c.id::text = lower(${reference})) desc limit 1
    for update of c`;
  if (!row) throw new ClientNotFoundError("no such client");
  return row;
}

async function readLocked(tx: Tx, id: string): Promise<ClientRecord> {
  const [row] = await tx<ClientRecord[]>`select ${columns(tx)} from oauth_clients c where c.id = ${id}`;
  return row as ClientRecord;
}

async function bumpAuthorizationVersion(tx: Tx, id: string): Promise<void> {
  await tx`
    update oauth_clients set authorization_version = authorization_version + 1, authorization_changed_at = now()
    where id = ${id}`;
}

async function checkProjects(tx: Tx, projectIds: readonly string[]): Promise<void> {
  const missing = await tx<{ id: string }[]>`
    select id::text from unnest(${projectIds as string[]}::uuid[]) as wanted (id)
    where not exists (select from projects p where p.id = wanted.id)`;
  if (missing.length > 0) {
    throw new UnknownProjectError(`no project has the id ${missing.map((m) => m.id).join(", ")}`);
  }
}

export interface CreatedClient {
  client: ClientRecord;
  /** Shown once; absent for a public client. */
  clientSecret?: string;
}

/** A developer app's owner, and the metadata the provider enforces for it. */
export interface DeveloperAppOwnership {
  ownerAccountId: string;
  metadata: Record<string, string>;
}

/**
 * Creates a client from a definition the rules accepted, with its resources (grants without
 * extra scopes) and projects. `developerApp`: an account's own app, counted against its limit.
 */
export async function createManagedClient(
  sql: Sql,
  actor: ClientActor,
  definition: ClientDefinition,
  secretKey: string | undefined,
  developerApp?: DeveloperAppOwnership,
): Promise<CreatedClient> {
  const ownerAccountId = developerApp?.ownerAccountId ?? null;
  let secret: { plain: string; hmac: string } | undefined;
  if (!definition.public) {
    if (secretKey === undefined) throw new Error("a confidential client needs CLIENT_SECRET_HMAC_KEY");
    const plain = generateClientSecret();
    secret = { plain, hmac: hashClientSecret(plain, secretKey) };
  }
  const client = await sql.begin(async (tx) => {
    if (ownerAccountId !== null) await checkDeveloperAppLimit(tx as unknown as Sql, ownerAccountId);
    await checkProjects(tx, definition.projectIds);
    const [row] = await tx<{ id: string }[]>`
      insert into oauth_clients (client_id, client_secret_hmac, name, redirect_uris,
        post_logout_redirect_uris, backchannel_logout_uri, grant_types, response_types,
        token_endpoint_auth_method, first_party, owner_account_id, access_token_ttl_seconds, metadata)
      values (${crypto.randomUUID()}, ${secret?.hmac ?? null}, ${definition.name}, ${definition.redirectUris},
        ${definition.postLogoutRedirectUris}, ${definition.backchannelLogoutUri ?? null},
        ${definition.grantTypes}, ${definition.responseTypes},
        ${secret === undefined ? "none" : "client_secret_basic"}, ${definition.firstParty},
        ${ownerAccountId}, ${definition.accessTokenTtlSeconds ?? null},
        ${tx.json(developerApp?.metadata ?? {})})
      returning id::text`;
    const id = (row as { id: string }).id;
    for (const resource of definition.resources) {
      await tx`insert into oauth_client_resources (client_id, resource) values (${id}, ${resource})`;
    }
    for (const projectId of definition.projectIds) {
      await tx`insert into oauth_client_projects (client_id, project_id) values (${id}, ${projectId})`;
    }
    const created = await readLocked(tx, id);
    await writeAuditEvent(tx, {
      event: "client.created",
      result: "success",
      actorAccountId: actor.accountId,
      clientId: created.clientId,
      details: {
        name: created.name,
        type: created.public ? "public" : "confidential",
        grantTypes: created.grantTypes,
        resources: created.resources,
        projectIds: created.projectIds,
        firstParty: created.firstParty,
        ...(ownerAccountId === null ? {} : { ownerAccountId }),
      },
    });
    return created;
  });
  return secret === undefined ? { client } : { client, clientSecret: secret.plain };
}

/** The fields a PUT replaces; the type (public or confidential) and the grants are not among them. */
type Replaceable = Omit<ClientDefinition, "public" | "resources">;

const REPLACEABLE_FIELDS = [
  "name",
  "redirectUris",
  "postLogoutRedirectUris",
  "backchannelLogoutUri",
  "grantTypes",
  "responseTypes",
  "firstParty",
  "accessTokenTtlSeconds",
  "projectIds",
] as const;

function storedValue(record: ClientRecord, field: (typeof REPLACEABLE_FIELDS)[number]): unknown {
  if (field === "backchannelLogoutUri") return record.backchannelLogoutUri ?? undefined;
  if (field === "accessTokenTtlSeconds") return record.accessTokenTtlSeconds ?? undefined;
  return record[field];
}

/** Whether the stored client is public: what a replacement must be judged with. */
export async function clientIsPublic(sql: Sql, reference: string, actor?: ClientActor): Promise<boolean> {
  return (await findClient(sql, reference, actor)).public;
}

/**
 * Replaces the client's definition (its grants and secret stay). A change of its projects
 * bumps the authorization version: a tenant token names the projects it was issued for.
 */
export async function replaceClient(
  sql: Sql,
  actor: ClientActor,
  reference: string,
  definition: Replaceable,
  metadata?: Record<string, string>,
): Promise<ClientRecord> {
  return sql.begin(async (tx) => {
    const locked = await lockClient(tx, reference, actor);
    await checkProjects(tx, definition.projectIds);
    const before = await readLocked(tx, locked.id);
    await tx`
      update oauth_clients set name = ${definition.name}, redirect_uris = ${definition.redirectUris},
        post_logout_redirect_uris = ${definition.postLogoutRedirectUris},
        backchannel_logout_uri = ${definition.backchannelLogoutUri ?? null},
        grant_types = ${definition.grantTypes}, response_types = ${definition.responseTypes},
        first_party = ${definition.firstParty},
        access_token_ttl_seconds = ${definition.accessTokenTtlSeconds ?? null}, updated_at = now()
      where id = ${locked.id}`;
    if (metadata !== undefined) {
      await tx`update oauth_clients set metadata = metadata || ${tx.json(metadata)} where id = ${locked.id}`;
    }
    const projectsChanged =
      JSON.stringify([...definition.projectIds].sort()) !== JSON.stringify(locked.projectIds);
    if (projectsChanged) {
      await tx`delete from oauth_client_projects where client_id = ${locked.id}`;
      for (const projectId of definition.projectIds) {
        await tx`insert into oauth_client_projects (client_id, project_id) values (${locked.id}, ${projectId})`;
      }
      await bumpAuthorizationVersion(tx, locked.id);
    }
    const changed = REPLACEABLE_FIELDS.filter((field) => {
      const stored = storedValue(before, field);
      const wanted = definition[field];
      const normal = (value: unknown) => (Array.isArray(value) ? [...value].sort() : value);
      return JSON.stringify(normal(stored)) !== JSON.stringify(normal(wanted));
    });
    await writeAuditEvent(tx, {
      event: "client.updated",
      result: "success",
      actorAccountId: actor.accountId,
      clientId: locked.clientId,
      details: { changed: [...changed], authorizationVersionBumped: projectsChanged },
    });
    return readLocked(tx, locked.id);
  });
}

/**
 * Deletes the client: refused from the next request on (disabled), every grant of every account
 * revoked with its refresh tokens and codes, and the client alone signed out of each session it
 * was in (a back-channel logout queued where it has a URI); the sessions' other clients stay.
 * The row stays as a tombstone so those logouts can still be signed for it. Answers how many
 * back-channel logouts were queued.
 */
export async function deleteManagedClient(sql: Sql, actor: ClientActor, reference: string): Promise<number> {
  return sql.begin(async (tx) => {
    const locked = await lockClient(tx, reference, actor);
    await tx`
      update oauth_clients set disabled_at = coalesce(disabled_at, now()), deleted_at = now(), updated_at = now()
      where id = ${locked.id}`;
    const accounts = await tx<{ accountId: string }[]>`
      select distinct account_id from oidc_records
      where account_id is not null
        and ((model = 'Session' and payload -> 'authorizations' ? ${locked.clientId})
          or (model = 'Grant' and payload ->> 'clientId' = ${locked.clientId}))
      order by account_id`;
    let logouts = 0;
    for (const { accountId } of accounts) {
      logouts += (await endClientAuthorizationIn(tx, accountId, locked.clientId)).logoutsQueued;
    }
    // What no account holds: client-credentials tokens, codes and interactions of the client.
    await tx`delete from oidc_records where model <> 'Session' and payload ->> 'clientId' = ${locked.clientId}`;
    await writeAuditEvent(tx, {
      event: "client.deleted",
      result: "success",
      actorAccountId: actor.accountId,
      clientId: locked.clientId,
      details: { accountsSignedOut: accounts.length, backchannelLogoutsQueued: logouts },
    });
    return logouts;
  });
}

export interface RotatedSecret {
  clientId: string;
  /** Shown once. */
  clientSecret: string;
  /** When the replaced secret stops authenticating; null: it already has. */
  previousSecretExpiresAt: Date | null;
}

/**
 * A new secret; the one it replaces keeps authenticating for `graceSeconds` (0: not at all). ONE
 * statement under the row's lock: concurrent rotations serialise, each replacing the previous
 * secret, so there is always exactly one current secret and at most one in its grace window (a
 * second rotation ends the first one's grace).
 */
export async function rotateClientSecret(
  sql: Sql,
  actor: ClientActor,
  reference: string,
  graceSeconds: number,
  secretKey: string,
): Promise<RotatedSecret> {
  const plain = generateClientSecret();
  const hmac = hashClientSecret(plain, secretKey);
  return sql.begin(async (tx) => {
    const locked = await lockClient(tx, reference, actor);
    if (locked.public) throw new PublicClientError("a public client has no secret");
    const [row] = await tx<{ previousSecretExpiresAt: Date | null }[]>`
      update oauth_clients set
        previous_client_secret_hmac = case when ${graceSeconds} > 0 then client_secret_hmac end,
        previous_secret_expires_at = case when ${graceSeconds} > 0
          then now() + make_interval(secs => ${graceSeconds}) end,
        client_secret_hmac = ${hmac}, secret_rotated_at = now(), updated_at = now()
      where id = ${locked.id}
      returning previous_secret_expires_at`;
    await writeAuditEvent(tx, {
      event: "client.secret-rotated",
      result: "success",
      actorAccountId: actor.accountId,
      clientId: locked.clientId,
      details: { graceSeconds },
    });
    return {
      clientId: locked.clientId,
      clientSecret: plain,
      previousSecretExpiresAt: (row as { previousSecretExpiresAt: Date | null }).previousSecretExpiresAt,
    };
  });
}

export interface ClientGrant {
  resource: string;
  scopes: string[];
  grantedAt: Date;
}

export async function listGrants(sql: Sql, reference: string, actor?: ClientActor): Promise<ClientGrant[]> {
  const client = await findClient(sql, reference, actor);
  return sql<ClientGrant[]>`
    select resource, scopes, granted_at from oauth_client_resources
    where client_id = ${client.id} order by resource`;
}

/**
 * Sets the client's grant of `resource` to `scopes` (creating it if absent). A change bumps the
 * authorization version; setting what is already there changes nothing and bumps nothing.
 */
export async function setGrant(
  sql: Sql,
  actor: ClientActor,
  reference: string,
  resource: string,
  scopes: readonly string[],
): Promise<{ grant: ClientGrant; created: boolean; authorizationVersion: string }> {
  const wanted = [...new Set(scopes)].sort();
  return sql.begin(async (tx) => {
    const locked = await lockClient(tx, reference, actor);
    const [existing] = await tx<{ scopes: string[] }[]>`
      select scopes from oauth_client_resources where client_id = ${locked.id} and resource = ${resource}`;
    const unchanged =
      existing !== undefined && JSON.stringify([...existing.scopes].sort()) === JSON.stringify(wanted);
    if (!unchanged) {
      await tx`
        insert into oauth_client_resources (client_id, resource, scopes) values (${locked.id}, ${resource}, ${wanted})
        on conflict (client_id, resource) do update set scopes = excluded.scopes, granted_at = now()`;
      await bumpAuthorizationVersion(tx, locked.id);
      await writeAuditEvent(tx, {
        event: "client.grant-set",
        result: "success",
        actorAccountId: actor.accountId,
        clientId: locked.clientId,
        details: { resource, scopes: wanted, previousScopes: existing?.scopes ?? null },
      });
    }
    const [grant] = await tx<ClientGrant[]>`
      select resource, scopes, granted_at from oauth_client_resources
      where client_id = ${locked.id} and resource = ${resource}`;
    const [version] = await tx<{ authorizationVersion: string }[]>`
      select authorization_version::text from oauth_clients where id = ${locked.id}`;
    return {
      grant: grant as ClientGrant,
      created: existing === undefined,
      authorizationVersion: (version as { authorizationVersion: string }).authorizationVersion,
    };
  });
}

/** Removes the client's grant of `resource`, bumping the authorization version. */
export async function removeGrant(
  sql: Sql,
  actor: ClientActor,
  reference: string,
  resource: string,
): Promise<void> {
  await sql.begin(async (tx) => {
    const locked = await lockClient(tx, reference, actor);
    const removed = await tx`
      delete from oauth_client_resources where client_id = ${locked.id} and resource = ${resource}`;
    if (removed.count === 0) throw new GrantNotFoundError("the client holds no grant for this resource");
    await bumpAuthorizationVersion(tx, locked.id);
    await writeAuditEvent(tx, {
      event: "client.grant-removed",
      result: "success",
      actorAccountId: actor.accountId,
      clientId: locked.clientId,
      details: { resource },
    });
  });
}

/**
 * A refused change's audit row: who tried what on which client (by its public client_id when
 * the reference names one, else as the request named it), and why. Never a secret.
 */
export async function auditRefusedClientChange(
  sql: Sql,
  event:
    | "client.created"
    | "client.updated"
    | "client.deleted"
    | "client.secret-rotated"
    | "client.grant-set"
    | "client.grant-removed"
    | "client.nested-added"
    | "client.nested-removed",
  actor: ClientActor,
  reference: string | undefined,
  reason: string,
  details: AuditDetails = {},
): Promise<void> {
  const [named] =
    reference === undefined
      ? []
      : await sql<{ clientId: string }[]>`
          select c.client_id from oauth_clients c where ${referenceCondition(sql, reference)}
          order by (c.id::text = lower(${reference})) desc limit 1`;
  const clientId = named?.clientId ?? reference;
  await writeAuditEvent(sql, {
    event,
    result: "failure",
    actorAccountId: actor.accountId,
    ...(clientId === undefined ? {} : { clientId }),
    details: { ...details, reason },
  });
}
