/**
 * Ending sessions and connected apps as the account itself asks (the account portal): each one
 * transaction that ends what it names and writes its one audit row, or, when refused (a session
 * or client that is not the account's), one failure row and nothing ended. The back-channel
 * logouts they queue are sent after the commit (`logoutsQueued` wakes the sender).
 */
import type { Sql, TransactionSql } from "../../platform/db.ts";
import { type AuditDetails, type AuditEvent, writeAuditEvent } from "../audit.ts";
import { forgetBrowserOf } from "./browsers.ts";
import {
  ClientAuthorizationNotFoundError,
  type Ended,
  endClientAuthorizationIn,
  endSessionsIn,
  type LogoutsQueued,
  SessionNotFoundError,
} from "./end.ts";

/** Who asks: the account, through the client of its portal token. */
export interface PortalActor {
  accountId: string;
  clientId: string;
}

/** How much an ending ended, for its audit row and the route's answer. */
function endedDetails(ended: Ended): AuditDetails {
  return {
    sessions: ended.sessions.map((session) => session.uid),
    grantsRevoked: ended.grantIds.length,
    backchannelLogoutsQueued: ended.logoutsQueued,
  };
}

async function audited<T extends { ended: Ended }>(
  sql: Sql,
  actor: PortalActor,
  event: AuditEvent,
  details: AuditDetails,
  logoutsQueued: LogoutsQueued,
  work: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  const entry = { event, actorAccountId: actor.accountId, clientId: actor.clientId };
  let result: T;
  try {
    result = (await sql.begin(async (tx) => {
      const done = await work(tx);
      await writeAuditEvent(tx, {
        ...entry,
        result: "success",
        details: { ...details, ...endedDetails(done.ended) },
      });
      return done;
    })) as T;
  } catch (err) {
    if (err instanceof SessionNotFoundError || err instanceof ClientAuthorizationNotFoundError) {
      await writeAuditEvent(sql, {
        ...entry,
        result: "failure",
        details: { ...details, reason: err.message },
      });
    }
    throw err;
  }
  if (result.ended.logoutsQueued > 0) logoutsQueued();
  return result;
}

/** One of the account's sessions, by its uid; SessionNotFoundError for any other uid. */
export function revokeSession(sql: Sql, actor: PortalActor, uid: string, logoutsQueued: LogoutsQueued) {
  return audited(sql, actor, "session.revoked", { session: uid }, logoutsQueued, async (tx) => ({
    ended: await endSessionsIn(tx, actor.accountId, { only: uid }),
  }));
}

/** Every session of the account but `currentUid`. */
export function revokeOtherSessions(
  sql: Sql,
  actor: PortalActor,
  currentUid: string,
  logoutsQueued: LogoutsQueued,
) {
  return audited(sql, actor, "session.others-revoked", { kept: currentUid }, logoutsQueued, async (tx) => ({
    ended: await endSessionsIn(tx, actor.accountId, { allBut: currentUid }),
  }));
}

/** What a logout ends: the current session, or every session of the account. */
export type LogoutScope = "session" | "account";

export function logOut(
  sql: Sql,
  actor: PortalActor,
  scope: LogoutScope,
  currentUid: string,
  logoutsQueued: LogoutsQueued,
) {
  return audited(sql, actor, "session.logged-out", { scope }, logoutsQueued, async (tx) => ({
    ended: await endSessionsIn(tx, actor.accountId, scope === "session" ? { only: currentUid } : "all"),
  }));
}

/**
 * Every account the browser of `currentUid` remembers: each one's session in that browser ends
 * (its sessions elsewhere stay), and the browser forgets them all.
 */
export function logOutBrowser(
  sql: Sql,
  actor: PortalActor,
  currentUid: string,
  logoutsQueued: LogoutsQueued,
) {
  return audited(sql, actor, "session.browser-logged-out", {}, logoutsQueued, async (tx) => {
    const remembered = await forgetBrowserOf(tx, currentUid, actor.accountId);
    const byAccount = new Map<string, string[]>();
    for (const { accountId, sessionUid } of remembered) {
      byAccount.set(accountId, [...(byAccount.get(accountId) ?? []), sessionUid]);
    }
    const endings: Ended[] = [];
    for (const [accountId, uids] of [...byAccount].sort(([a], [b]) => a.localeCompare(b))) {
      endings.push(await endSessionsIn(tx, accountId, { among: uids }));
    }
    return {
      accountIds: [...byAccount.keys()].sort(),
      ended: {
        sessions: endings.flatMap((ending) => ending.sessions),
        grantIds: endings.flatMap((ending) => ending.grantIds),
        logoutsQueued: endings.reduce((sum, ending) => sum + ending.logoutsQueued, 0),
      },
    };
  });
}

/** One client's part of the account's sessions and every grant it holds from the account. */
export function revokeConnectedApp(
  sql: Sql,
  actor: PortalActor,
  clientId: string,
  logoutsQueued: LogoutsQueued,
) {
  return audited(
    sql,
    actor,
    "client.authorization-revoked",
    { revokedClient: clientId },
    logoutsQueued,
    async (tx) => ({
      ended: await endClientAuthorizationIn(tx, actor.accountId, clientId),
    }),
  );
}
