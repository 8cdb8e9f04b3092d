/**
 * An account's live provider sessions and its grants, read through the adapter's indexed columns
 * of oidc_records (oidc-provider has no API to list them). A record past its expiry is not live,
 * whether or not the purge has deleted it yet.
 */
import type { Sql } from "../../platform/db.ts";
import {
  epochDate,
  type GrantPayload,
  grantScopes,
  type SessionPayload,
  type SignedInClient,
  signedInClients,
} from "./payload.ts";

export interface SessionSummary {
  /** The session's uid: how the portal and browser_sessions name it (never its cookie value). */
  uid: string;
  signedInAt: Date | undefined;
  /**
   * Its latest use: the provider's last save of the session (a sign-in or an authorization
   * through it) or a token refresh TJM recorded, whichever is later.
   */
  lastUsedAt: Date | undefined;
  /** The browser's address and user agent at its latest authorization, when TJM recorded them. */
  clientAddress: string | undefined;
  userAgent: string | undefined;
  expiresAt: Date | undefined;
  /** With each client's name; undefined for a client deleted since. */
  clients: (SignedInClient & { name: string | undefined })[];
  /** The browser that holds it, when TJM recorded the sign-in (browser_sessions). */
  browser: { id: string; rememberedAt: Date; lastSeenAt: Date } | undefined;
}

interface SessionRow {
  uid: string;
  payload: SessionPayload;
  expiresAt: Date | null;
  browserId: string | null;
  rememberedAt: Date | null;
  lastSeenAt: Date | null;
  lastUsedAt: Date | null;
  clientAddress: string | null;
  userAgent: string | null;
}

function later(a: Date | undefined, b: Date | null): Date | undefined {
  if (!b) return a;
  return a === undefined || b > a ? b : a;
}

export async function listSessions(sql: Sql, accountId: string): Promise<SessionSummary[]> {
  const rows = await sql<SessionRow[]>`
    select s.uid, s.payload, s.expires_at, bs.browser_id, bs.remembered_at, b.last_seen_at,
      bs.last_used_at, host(bs.client_address) as client_address, bs.user_agent
    from oidc_records s
    left join browser_sessions bs on bs.session_uid = s.uid
    left join browsers b on b.id = bs.browser_id
    where s.model = 'Session' and s.account_id = ${accountId} and s.uid is not null
      and (s.expires_at is null or s.expires_at > now())`;
  const clientIds = [...new Set(rows.flatMap((row) => signedInClients(row.payload).map((c) => c.clientId)))];
  const names = new Map(
    (
      await sql<{ clientId: string; name: string }[]>`
        select client_id, name from oauth_clients where client_id = any(${clientIds}::text[])`
    ).map((client) => [client.clientId, client.name]),
  );
  return rows
    .map((row) => ({
      uid: row.uid,
      signedInAt: epochDate(row.payload.loginTs),
      lastUsedAt: later(epochDate(row.payload.iat), row.lastUsedAt),
      clientAddress: row.clientAddress ?? undefined,
      userAgent: row.userAgent ?? undefined,
      expiresAt: row.expiresAt ?? undefined,
      clients: signedInClients(row.payload).map((client) => ({
        ...client,
        name: names.get(client.clientId),
      })),
      browser:
        row.browserId && row.rememberedAt && row.lastSeenAt
          ? { id: row.browserId, rememberedAt: row.rememberedAt, lastSeenAt: row.lastSeenAt }
          : undefined,
    }))
    .sort((a, b) => (b.signedInAt?.getTime() ?? 0) - (a.signedInAt?.getTime() ?? 0));
}

export interface GrantSummary {
  grantId: string;
  grantedAt: Date | undefined;
  expiresAt: Date | undefined;
  /** OpenID scopes, and the scopes held per resource indicator. */
  scopes: ReturnType<typeof grantScopes>;
}

/** The grants one client holds from the account: what the portal's connected apps list. */
export interface ClientGrants {
  clientId: string;
  grants: GrantSummary[];
}

export async function listGrants(sql: Sql, accountId: string): Promise<ClientGrants[]> {
  const rows = await sql<{ id: string; payload: GrantPayload; expiresAt: Date | null }[]>`
    select id, payload, expires_at from oidc_records
    where model = 'Grant' and account_id = ${accountId}
      and (expires_at is null or expires_at > now())`;
  const byClient = new Map<string, GrantSummary[]>();
  for (const row of rows) {
    const clientId = row.payload.clientId;
    if (typeof clientId !== "string") continue;
    const grants = byClient.get(clientId) ?? [];
    grants.push({
      grantId: row.id,
      grantedAt: epochDate(row.payload.iat),
      expiresAt: row.expiresAt ?? undefined,
      scopes: grantScopes(row.payload),
    });
    byClient.set(clientId, grants);
  }
  return [...byClient]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([clientId, grants]) => ({
      clientId,
      grants: grants.sort((a, b) => (a.grantedAt?.getTime() ?? 0) - (b.grantedAt?.getTime() ?? 0)),
    }));
}

/** How many live provider sessions the account has: one index probe (oidc_records_account). */
export async function countLiveSessions(sql: Sql, accountId: string): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from oidc_records
    where model = 'Session' and account_id = ${accountId} and uid is not null
      and (expires_at is null or expires_at > now())`;
  return row?.count ?? 0;
}

/**
 * The uid of the account's live session whose clients' tokens carry `sid` (a token's `sid`
 * claim); undefined when that session has ended.
 */
export async function sessionUidOf(sql: Sql, accountId: string, sid: string): Promise<string | undefined> {
  const [row] = await sql<{ uid: string }[]>`
    select uid from oidc_records
    where model = 'Session' and sids @> array[${sid}::text] and account_id = ${accountId}
      and uid is not null and (expires_at is null or expires_at > now())`;
  return row?.uid;
}

/** A client the account granted, as the portal's connected apps list it. */
export interface ConnectedApp {
  clientId: string;
  /** The client's name; undefined when the client has been deleted since. */
  name: string | undefined;
  scopes: ReturnType<typeof grantScopes>;
  /** The earliest grant it holds from the account. */
  firstUsedAt: Date | undefined;
  /** The latest issuance under its grants: the grant itself, an authorization code, a refresh. */
  lastUsedAt: Date | undefined;
}

/** Every client holding a live grant of the account, its grants' scopes merged. */
export async function listConnectedApps(sql: Sql, accountId: string): Promise<ConnectedApp[]> {
  const rows = await sql<
    { clientId: string; name: string | null; payload: GrantPayload; lastUsed: number | null }[]
  >`
    select g.payload ->> 'clientId' as client_id, c.name, g.payload,
      (select max(greatest((r.payload ->> 'iat')::float8, extract(epoch from r.consumed_at)::float8))
       from oidc_records r where r.grant_id = g.id) as last_used
    from oidc_records g
    left join oauth_clients c on c.client_id = g.payload ->> 'clientId'
    where g.model = 'Grant' and g.account_id = ${accountId} and g.payload ->> 'clientId' is not null
      and (g.expires_at is null or g.expires_at > now())`;
  const byClient = new Map<string, ConnectedApp>();
  for (const row of rows) {
    const granted = epochDate(row.payload.iat);
    const used = [granted, epochDate(row.lastUsed)].filter((date): date is Date => date !== undefined);
    const scopes = grantScopes(row.payload);
    const app = byClient.get(row.clientId) ?? {
      clientId: row.clientId,
      name: row.name ?? undefined,
      scopes: { openid: [], resources: {} },
      firstUsedAt: undefined,
      lastUsedAt: undefined,
    };
    app.scopes.openid = [...new Set([...app.scopes.openid, ...scopes.openid])].sort();
    for (const [resource, held] of Object.entries(scopes.resources)) {
      app.scopes.resources[resource] = [
        ...new Set([...(app.scopes.resources[resource] ?? []), ...held]),
      ].sort();
    }
    if (granted && (!app.firstUsedAt || granted < app.firstUsedAt)) app.firstUsedAt = granted;
    for (const date of used) if (!app.lastUsedAt || date > app.lastUsedAt) app.lastUsedAt = date;
    byClient.set(row.clientId, app);
  }
  return [...byClient.values()].sort((a, b) => a.clientId.localeCompare(b.clientId));
}
