/**
 * Whether a token TJM's issuer signed still stands, asked on every request that carries one:
 * its client still enabled and at the authorization version the token names, its account still
 * there, enabled, not revoked since, its sign-in session still alive, its grant not revoked (a
 * replayed code, a reused refresh token, a logout or a revocation destroys it), and still
 * holding the role its audience needs (operator for the operations audience, client-admin for
 * the admin console). One query; replicas agree because the answer is in
 * PostgreSQL.
 * Open event streams ask again every few seconds, all of a Manager's streams in one query.
 */
import type { JWTPayload } from "jose";
import type { Sql } from "../../platform/db.ts";

export const AUTHORIZATION_VERSION_CLAIM = "tjm_authorization_version";
/** An account's roles its client may see (the account's roles ∩ the client's roles); informative only. */
export const ROLES_CLAIM = "roles";
/** The provider's grant an account's access token was issued under (JWT access tokens carry none). */
export const GRANT_CLAIM = "tjm_grant_id";

export type TokenResource = "operations" | "tenant" | "account-portal" | "admin-console";

/** Resources whose tokens always speak for an account: a client's own token is refused. */
const ACCOUNT_RESOURCES: readonly TokenResource[] = ["account-portal", "admin-console"];

export interface TokenStandingRow {
  clientActive: boolean;
  /** bigint as text (postgres.js); null when the client does not exist. */
  authorizationVersion: string | null;
  accountExists: boolean;
  accountDisabled: boolean;
  /** Epoch seconds; -Infinity when never revoked. */
  tokensValidAfter: number | null;
  operator: boolean;
  clientAdmin: boolean;
  sessionLive: boolean;
  grantLive: boolean;
}

export type Standing = { ok: true } | { ok: false; status: 401 | 403; reason: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A token for an account (the authorization-code flow) rather than for the client itself. */
export function accountOf(claims: JWTPayload): string | undefined {
  return typeof claims.sub === "string" && claims.sub !== claims.client_id && UUID.test(claims.sub)
    ? claims.sub
    : undefined;
}

/** The decision, apart from the query: what each row means for the token. */
export function judgeStanding(claims: JWTPayload, row: TokenStandingRow, resource: TokenResource): Standing {
  const refuse = (reason: string, status: 401 | 403 = 401): Standing => ({ ok: false, status, reason });
  if (!row.clientActive || row.authorizationVersion === null) {
    return refuse("the token's client is disabled or no longer exists");
  }
  const version = claims[AUTHORIZATION_VERSION_CLAIM];
  if (typeof version !== "number" || version < Number(row.authorizationVersion)) {
    return refuse("the token was issued under an older authorization version of its client; get a new token");
  }
  const isAccountToken = claims.sub !== claims.client_id;
  if (!isAccountToken) {
    return ACCOUNT_RESOURCES.includes(resource)
      ? refuse(`a ${resource} token is an account's; this one is its client's own`, 403)
      : { ok: true };
  }
  // Every token TJM issues for an account comes from an interactive sign-in and names its session
  // and grant; one without them would skip the checks below that end it.
  if (typeof claims.sid !== "string") return refuse("the token names no sign-in session; sign in again");
  if (typeof claims[GRANT_CLAIM] !== "string") return refuse("the token names no grant; sign in again");
  if (!row.accountExists) return refuse("the token's account no longer exists");
  if (row.accountDisabled) return refuse("the token's account is disabled");
  const issuedAt = typeof claims.iat === "number" ? claims.iat : Number.NEGATIVE_INFINITY;
  if (row.tokensValidAfter !== null && issuedAt <= Math.floor(row.tokensValidAfter)) {
    return refuse("the token was issued before its account's tokens were revoked; sign in again");
  }
  if (!row.sessionLive) return refuse("the sign-in session of the token has ended; sign in again");
  if (!row.grantLive) {
    return refuse("the token's grant was revoked (logout, revocation, or a reused code or refresh token)");
  }
  if (resource === "operations" && !row.operator) {
    return refuse("the token's account does not hold the operator role", 403);
  }
  if (resource === "admin-console" && !row.clientAdmin) {
    return refuse("the token's account does not hold the client-admin role", 403);
  }
  return { ok: true };
}

/** One token to judge, and the resource it is presented for. */
export interface StandingQuestion {
  claims: JWTPayload;
  resource: TokenResource;
}

export async function tokenStanding(
  sql: Sql,
  claims: JWTPayload,
  resource: TokenResource,
): Promise<Standing> {
  const [standing] = await tokenStandings(sql, [{ claims, resource }]);
  return standing as Standing;
}

/**
 * The standing of many tokens in one query, one row per distinct client, account and session
 * among them: what open event streams re-ask every few seconds, however many are open.
 */
export async function tokenStandings(sql: Sql, questions: readonly StandingQuestion[]): Promise<Standing[]> {
  const keys = new Map<string, number>();
  const clientIds: string[] = [];
  const accountIds: (string | null)[] = [];
  const sids: (string | null)[] = [];
  const grantIds: (string | null)[] = [];
  const rowIndexes = questions.map(({ claims }) => {
    const clientId = typeof claims.client_id === "string" ? claims.client_id : null;
    if (clientId === null) return undefined;
    const accountId = accountOf(claims) ?? null;
    const sid = typeof claims.sid === "string" ? claims.sid : null;
    const grantId = typeof claims[GRANT_CLAIM] === "string" ? claims[GRANT_CLAIM] : null;
    const key = JSON.stringify([clientId, accountId, sid, grantId]);
    let index = keys.get(key);
    if (index === undefined) {
      index = clientIds.length;
      keys.set(key, index);
      clientIds.push(clientId);
      accountIds.push(accountId);
      sids.push(sid);
      grantIds.push(grantId);
    }
    return index;
  });
  const rows =
    clientIds.length === 0
      ? []
      : await sql<(TokenStandingRow & { ordinal: number })[]>`
    select
      t.ordinal::int as ordinal,
      coalesce(c.disabled_at is null, false) as client_active,
      c.authorization_version::text as authorization_version,
      a.id is not null as account_exists,
      coalesce(a.disabled_at is not null, false) as account_disabled,
      extract(epoch from a.tokens_valid_after)::float8 as tokens_valid_after,
      exists (select from account_roles r where r.account_id = a.id and r.role = 'operator') as operator,
      exists (select from account_roles r where r.account_id = a.id and r.role = 'client-admin') as client_admin,
      (t.sid is null or exists (
        select from oidc_records s
        where s.model = 'Session' and s.sids @> array[t.sid]
          and (s.expires_at is null or s.expires_at > now())
      )) as session_live,
      -- Revoking a grant deletes its record; its expiry is the token's own business (exp).
      (t.grant_id is null or exists (
        select from oidc_records g where g.model = 'Grant' and g.id = t.grant_id
      )) as grant_live
    from unnest(${clientIds}::text[], ${accountIds}::uuid[], ${sids}::text[], ${grantIds}::text[])
      with ordinality as t (client_id, account_id, sid, grant_id, ordinal)
    left join oauth_clients c on c.client_id = t.client_id
    left join accounts a on a.id = t.account_id`;
  const byIndex = new Map(rows.map((row) => [row.ordinal - 1, row]));
  return questions.map(({ claims, resource }, question) => {
    const index = rowIndexes[question];
    if (index === undefined) return { ok: false, status: 401, reason: "the token names no client" };
    return judgeStanding(claims, byIndex.get(index) as TokenStandingRow, resource);
  });
}
