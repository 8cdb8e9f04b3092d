/** Named queries over admin_pre_sessions, admin_sessions and admin_logout_token_ids. */
import { createHash } from "node:crypto";
import type { Sql } from "postgres";

/** What the database holds for a cookie's id: its SHA-256, never the id itself. */
export function idHash(sessionId: string): Buffer {
  return createHash("sha256").update(sessionId).digest();
}

export async function insertPreSession(sql: Sql, hash: Buffer, sealed: Buffer, expiresAt: Date) {
  await sql`insert into admin_pre_sessions (id_hash, sealed, expires_at) values (${hash}, ${sealed}, ${expiresAt})`;
}

/** Takes the pre-session out: a callback URL replayed finds nothing. */
export async function takePreSession(sql: Sql, hash: Buffer): Promise<Buffer | undefined> {
  const [row] = await sql<{ sealed: Buffer }[]>`
    delete from admin_pre_sessions where id_hash = ${hash} and expires_at > now() returning sealed`;
  return row?.sealed;
}

export interface NewSession {
  hash: Buffer;
  accountSub: string;
  sid: string | undefined;
  sealedTokens: Buffer;
  accessExpiresAt: Date;
  expiresAt: Date;
}

export async function insertSession(sql: Sql, session: NewSession) {
  await sql`
    insert into admin_sessions (id_hash, account_sub, sid, sealed_tokens, access_expires_at, expires_at)
    values (${session.hash}, ${session.accountSub}, ${session.sid ?? null}, ${session.sealedTokens},
            ${session.accessExpiresAt}, ${session.expiresAt})`;
}

export interface SessionRow {
  accountSub: string;
  sid: string | null;
  sealedTokens: Buffer;
  accessExpiresAt: Date;
}

/** The session if neither timeout has passed; `touch` counts the request as activity. */
export async function findLiveSession(
  sql: Sql,
  hash: Buffer,
  idleMinutes: number,
  touch: boolean,
): Promise<SessionRow | undefined> {
  const idle = `${idleMinutes} minutes`;
  const [row] = touch
    ? await sql<SessionRow[]>`
        update admin_sessions set last_seen_at = now()
        where id_hash = ${hash} and expires_at > now() and last_seen_at > now() - ${idle}::interval
        returning account_sub, sid, sealed_tokens, access_expires_at`
    : await sql<SessionRow[]>`
        select account_sub, sid, sealed_tokens, access_expires_at from admin_sessions
        where id_hash = ${hash} and expires_at > now() and last_seen_at > now() - ${idle}::interval`;
  return row;
}

/** Deletes the session if a timeout has passed (the other reason findLiveSession finds none). */
export async function deleteTimedOutSession(sql: Sql, hash: Buffer, idleMinutes: number) {
  await sql`
    delete from admin_sessions
    where id_hash = ${hash}
      and (expires_at <= now() or last_seen_at <= now() - ${`${idleMinutes} minutes`}::interval)`;
}

/** Locks the row for a token refresh, so two Admin processes never spend one refresh token twice. */
export async function lockSession(sql: Sql, hash: Buffer): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select account_sub, sid, sealed_tokens, access_expires_at from admin_sessions
    where id_hash = ${hash} for update`;
  return row;
}

export async function updateSessionTokens(
  sql: Sql,
  hash: Buffer,
  sealedTokens: Buffer,
  accessExpiresAt: Date,
) {
  await sql`
    update admin_sessions set sealed_tokens = ${sealedTokens}, access_expires_at = ${accessExpiresAt}
    where id_hash = ${hash}`;
}

export async function deleteSession(sql: Sql, hash: Buffer) {
  await sql`delete from admin_sessions where id_hash = ${hash}`;
}

/** Deletes the session and answers its sealed tokens; undefined when there was none. */
export async function takeSession(sql: Sql, hash: Buffer): Promise<Buffer | undefined> {
  const [row] = await sql<{ sealedTokens: Buffer }[]>`
    delete from admin_sessions where id_hash = ${hash} returning sealed_tokens`;
  return row?.sealedTokens;
}

/** Ends every session of a provider session (sid) or, without one, of an account (sub). */
export async function deleteSessionsOf(sql: Sql, by: { sid?: string; sub?: string }): Promise<number> {
  const rows =
    by.sid !== undefined
      ? await sql`delete from admin_sessions where sid = ${by.sid} returning 1`
      : await sql`delete from admin_sessions where account_sub = ${by.sub ?? ""} returning 1`;
  return rows.length;
}

/** Records a logout token's jti; false when it was seen before (a replay). */
export async function recordLogoutTokenId(sql: Sql, jti: string, expiresAt: Date): Promise<boolean> {
  await sql`delete from admin_logout_token_ids where expires_at < now()`;
  const rows = await sql`
    insert into admin_logout_token_ids (jti, expires_at) values (${jti}, ${expiresAt})
    on conflict (jti) do nothing returning 1`;
  return rows.length === 1;
}

/** Drops expired pre-sessions and sessions; run now and then. */
export async function deleteExpired(sql: Sql, idleMinutes: number) {
  await sql`delete from admin_pre_sessions where expires_at < now()`;
  await sql`
    delete from admin_sessions
    where expires_at < now() or last_seen_at < now() - ${`${idleMinutes} minutes`}::interval`;
}
