/**
 * Ending an account's provider sessions, or one client's part of them, as TJM decides it (the
 * portal, an administrator, a password reset) rather than through oidc-provider's own logout
 * page. Each ending is ONE transaction that:
 *
 * - deletes the Session records (or rewrites a session without the client's authorization), so
 *   the Manager's standing check finds no live session for the tokens' `sid`;
 * - revokes every affected grant: its Grant record and every record bound to it (refresh
 *   tokens, codes), so refresh answers invalid_grant and the standing check finds no grant for
 *   the access tokens' `tjm_grant_id`;
 * - forgets the browsers' remembered sign-ins of the ended sessions (browser_sessions);
 * - queues one back-channel logout per (client with a back-channel logout URI, account, sid) in
 *   backchannel_logout_outbox, which a Node Manager's sender delivers after the commit.
 *
 * The provider is not asked: its records are these rows (provider/adapter.ts), and it has no API
 * to end a session by account. `logoutsQueued` (the sender's wake) is called after a commit that
 * queued rows; a sender that is not woken still finds them at its next tick.
 */
import type { Sql, TransactionSql as Tx } from "../../platform/db.ts";
import {
  type SessionPayload,
  type SignedInClient,
  sessionSids,
  signedInClients,
  withoutClient,
} from "./payload.ts";

/** The session asked for is not a live session of the account (another account's is the same). */
export class SessionNotFoundError extends Error {}

/** The client holds no session authorization and no grant of the account. */
export class ClientAuthorizationNotFoundError extends Error {}

export interface EndedSession {
  uid: string;
  /** The clients whose part ended (every client of a session ended whole). */
  clients: SignedInClient[];
}

export interface Ended {
  sessions: EndedSession[];
  /** Every grant revoked, the session's and (for a client's part) the client's others. */
  grantIds: string[];
  /** Back-channel logouts queued: one per client with a back-channel logout URI and sid. */
  logoutsQueued: number;
}

/** Called after the commit when it queued back-channel logouts (the sender's wake). */
export type LogoutsQueued = () => void;

/** Which of an account's sessions end. */
export type SessionSelection = { only: string } | { allBut: string } | "all";

interface LockedSession {
  id: string;
  uid: string;
  payload: SessionPayload;
}

/** The account's live sessions that `selection` names, locked until the transaction ends. */
function lockSessions(tx: Tx, accountId: string, selection: SessionSelection) {
  const which =
    selection === "all"
      ? tx``
      : "only" in selection
        ? tx`and uid = ${selection.only}`
        : tx`and uid <> ${selection.allBut}`;
  return tx<LockedSession[]>`
    select id, uid, payload from oidc_records
    where model = 'Session' and account_id = ${accountId} and uid is not null
      and (expires_at is null or expires_at > now()) ${which}
    order by uid
    for update`;
}

/** Deletes each grant's record and every record bound to it. */
async function revokeGrants(tx: Tx, grantIds: readonly string[]): Promise<void> {
  if (grantIds.length === 0) return;
  await tx`
    delete from oidc_records
    where (model = 'Grant' and id = any(${grantIds}::text[])) or grant_id = any(${grantIds}::text[])`;
}

/** One outbox row per signed-in client that has a back-channel logout URI; returns how many. */
async function queueBackchannelLogouts(
  tx: Tx,
  accountId: string,
  clients: readonly SignedInClient[],
): Promise<number> {
  const owed = clients.filter(
    (client): client is SignedInClient & { sid: string } => client.sid !== undefined,
  );
  if (owed.length === 0) return 0;
  const queued = await tx`
    insert into backchannel_logout_outbox (client_id, account_id, sid)
    select c.client_id, ${accountId}, t.sid
    from unnest(${owed.map((client) => client.clientId)}::text[], ${owed.map((client) => client.sid)}::text[])
      as t (client_id, sid)
    join oauth_clients c on c.client_id = t.client_id
    where c.backchannel_logout_uri is not null`;
  return queued.count;
}

async function endSelected(
  sql: Sql,
  accountId: string,
  selection: SessionSelection,
  logoutsQueued: LogoutsQueued | undefined,
): Promise<Ended> {
  const ended = await sql.begin((tx) => endSelectedIn(tx, accountId, selection));
  if (ended.logoutsQueued > 0) logoutsQueued?.();
  return ended;
}

async function endSelectedIn(tx: Tx, accountId: string, selection: SessionSelection): Promise<Ended> {
  const sessions = await lockSessions(tx, accountId, selection);
  if (sessions.length === 0 && typeof selection === "object" && "only" in selection) {
    throw new SessionNotFoundError("no such session");
  }
  const ended = sessions.map((session) => ({
    uid: session.uid,
    clients: signedInClients(session.payload),
  }));
  const clients = ended.flatMap((session) => session.clients);
  const grantIds = [...new Set(clients.flatMap((client) => (client.grantId ? [client.grantId] : [])))];
  if (sessions.length > 0) {
    await tx`delete from oidc_records where model = 'Session' and id = any(${sessions.map((s) => s.id)}::text[])`;
    await tx`delete from browser_sessions where session_uid = any(${ended.map((s) => s.uid)}::text[])`;
  }
  await revokeGrants(tx, grantIds);
  return {
    sessions: ended,
    grantIds,
    logoutsQueued: await queueBackchannelLogouts(tx, accountId, clients),
  };
}

/** Ends one of the account's sessions; SessionNotFoundError when it has no such live session. */
export function endSession(
  sql: Sql,
  accountId: string,
  uid: string,
  logoutsQueued?: LogoutsQueued,
): Promise<Ended> {
  return endSelected(sql, accountId, { only: uid }, logoutsQueued);
}

/** Ends every session of the account except `keepUid` (the current one), which is left as it is. */
export function endOtherSessions(
  sql: Sql,
  accountId: string,
  keepUid: string,
  logoutsQueued?: LogoutsQueued,
): Promise<Ended> {
  return endSelected(sql, accountId, { allBut: keepUid }, logoutsQueued);
}

/** Ends every session of the account (log out everywhere, a password reset). */
export function endAllSessions(sql: Sql, accountId: string, logoutsQueued?: LogoutsQueued): Promise<Ended> {
  return endSelected(sql, accountId, "all", logoutsQueued);
}

/**
 * Ends every session of the account inside the caller's transaction (a password reset commits
 * the new password and the ended sessions together). The caller wakes the back-channel logout
 * sender after its commit when `logoutsQueued` is above zero.
 */
export function endAllSessionsIn(tx: Tx, accountId: string): Promise<Ended> {
  return endSelectedIn(tx, accountId, "all");
}

/**
 * Ends one client's part of the account's sessions (revoking a connected app): each session
 * keeps its other clients but loses this one's authorization and sid, and every grant the
 * client holds from the account is revoked, those of sessions already ended included.
 * ClientAuthorizationNotFoundError when the client holds neither.
 */
export async function endClientAuthorization(
  sql: Sql,
  accountId: string,
  clientId: string,
  logoutsQueued?: LogoutsQueued,
): Promise<Ended> {
  const ended = await sql.begin(async (tx) => {
    const sessions = await tx<LockedSession[]>`
      select id, uid, payload from oidc_records
      where model = 'Session' and account_id = ${accountId} and uid is not null
        and (expires_at is null or expires_at > now())
        and payload -> 'authorizations' ? ${clientId}
      order by uid
      for update`;
    const grants = await tx<{ id: string }[]>`
      select id from oidc_records
      where model = 'Grant' and account_id = ${accountId} and payload ->> 'clientId' = ${clientId}
      for update`;
    if (sessions.length === 0 && grants.length === 0) {
      throw new ClientAuthorizationNotFoundError("the client holds no authorization of this account");
    }
    const ended: EndedSession[] = [];
    for (const session of sessions) {
      const clients = signedInClients(session.payload).filter((client) => client.clientId === clientId);
      const rest = withoutClient(session.payload, clientId);
      await tx`
        update oidc_records set payload = ${tx.json(rest as never)}, sids = ${sessionSids(rest)}
        where model = 'Session' and id = ${session.id}`;
      ended.push({ uid: session.uid, clients });
    }
    const clients = ended.flatMap((session) => session.clients);
    const grantIds = [
      ...new Set([
        ...clients.flatMap((client) => (client.grantId ? [client.grantId] : [])),
        ...grants.map((grant) => grant.id),
      ]),
    ];
    await revokeGrants(tx, grantIds);
    return {
      sessions: ended,
      grantIds,
      logoutsQueued: await queueBackchannelLogouts(tx, accountId, clients),
    };
  });
  if (ended.logoutsQueued > 0) logoutsQueued?.();
  return ended;
}
