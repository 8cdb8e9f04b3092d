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
  /** The provider's last save of the session: a sign-in or an authorization through it. */
  lastUsedAt: Date | undefined;
  expiresAt: Date | undefined;
  clients: SignedInClient[];
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
}

export async function listSessions(sql: Sql, accountId: string): Promise<SessionSummary[]> {
  const rows = await sql<SessionRow[]>`
    select s.uid, s.payload, s.expires_at, bs.browser_id, bs.remembered_at, b.last_seen_at
    from oidc_records s
    left join browser_sessions bs on bs.session_uid = s.uid
    left join browsers b on b.id = bs.browser_id
    where s.model = 'Session' and s.account_id = ${accountId} and s.uid is not null
      and (s.expires_at is null or s.expires_at > now())`;
  return rows
    .map((row) => ({
      uid: row.uid,
      signedInAt: epochDate(row.payload.loginTs),
      lastUsedAt: epochDate(row.payload.iat),
      expiresAt: row.expiresAt ?? undefined,
      clients: signedInClients(row.payload),
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
 * The uid of the account's live session that handed out `sid` (a token's sid claim is per
 * client: the session's uid is how TJM names the session itself), or undefined.
 */
export async function sessionUidOfSid(sql: Sql, accountId: string, sid: string): Promise<string | undefined> {
  const [row] = await sql<{ uid: string }[]>`
    select uid from oidc_records
    where model = 'Session' and account_id = ${accountId} and sids @> array[${sid}]::text[]
      and uid is not null and (expires_at is null or expires_at > now())`;
  return row?.uid;
}
