/**
 * Console sessions in PostgreSQL, so any Admin process serves any user: the cookie's id is
 * looked up by its hash, both timeouts are checked on every read, and each access token (one per
 * resource the account may use) is refreshed with its own `resource` shortly before it expires
 * (under a row lock: one refresh across processes). The row's access_expires_at is the first
 * of their expiries.
 */
import type { Logger } from "@tjm/platform";
import type { Sql } from "../platform/db.ts";
import {
  CONSOLE_RESOURCES,
  type ConsoleResource,
  firstExpiry,
  type RelyingParty,
  type SessionTokens,
  type SignedIn,
} from "../sign-in/relying-party.ts";
import { newSessionId } from "./cookie.ts";
import type { Sealer } from "./sealing.ts";
import * as store from "./store.ts";

/** Refresh when the access token has less than this left. */
const REFRESH_BEFORE_MS = 60_000;
/** A sign-in not finished within this is forgotten. */
const PRE_SESSION_TTL_MS = 10 * 60_000;

/** Decided from the row's access_expires_at, like both timeouts, not from the sealed tokens. */
function refreshDue(row: store.SessionRow): boolean {
  return row.accessExpiresAt.getTime() - Date.now() <= REFRESH_BEFORE_MS;
}

export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
}

export interface Session {
  hash: Buffer;
  sub: string;
  sid: string | undefined;
  tokens: SessionTokens;
}

/** The session's access token for `resource`; undefined when the account may not use it. */
export function accessTokenFor(session: Session, resource: ConsoleResource): string | undefined {
  return session.tokens.access[resource]?.token;
}

function withoutResource(tokens: SessionTokens, resource: ConsoleResource): SessionTokens {
  const access = { ...tokens.access };
  delete access[resource];
  return { ...tokens, access };
}

export interface SessionsOptions {
  sql: Sql;
  sealer: Sealer;
  relyingParty: RelyingParty;
  idleMinutes: number;
  absoluteHours: number;
  logger: Logger;
}

export class Sessions {
  constructor(private readonly options: SessionsOptions) {}

  get idleMinutes(): number {
    return this.options.idleMinutes;
  }

  async startSignIn(pending: PendingSignIn): Promise<string> {
    const id = newSessionId();
    const hash = store.idHash(id);
    const sealed = this.options.sealer.seal(pending, hash);
    await store.insertPreSession(this.options.sql, hash, sealed, new Date(Date.now() + PRE_SESSION_TTL_MS));
    return id;
  }

  async takeSignIn(id: string): Promise<PendingSignIn | undefined> {
    const hash = store.idHash(id);
    const sealed = await store.takePreSession(this.options.sql, hash);
    return sealed && this.options.sealer.open<PendingSignIn>(sealed, hash);
  }

  /** A new session under a new id: whatever id the browser had before is never reused. */
  async create(signedIn: SignedIn): Promise<string> {
    const id = newSessionId();
    const hash = store.idHash(id);
    await store.insertSession(this.options.sql, {
      hash,
      accountSub: signedIn.sub,
      sid: signedIn.sid,
      sealedTokens: this.options.sealer.seal(signedIn.tokens, hash),
      accessExpiresAt: new Date(firstExpiry(signedIn.tokens)),
      expiresAt: new Date(Date.now() + this.options.absoluteHours * 3_600_000),
    });
    return id;
  }

  /**
   * The live session of a cookie id, its access token fresh; undefined when there is none, it
   * timed out, or the refresh failed (which ends it). `touch` counts the request as activity.
   */
  async current(id: string | undefined, touch = true): Promise<Session | undefined> {
    if (id === undefined) return undefined;
    const hash = store.idHash(id);
    const row = await store.findLiveSession(this.options.sql, hash, this.options.idleMinutes, touch);
    if (!row) {
      // A timed-out session ends now rather than at the next sweep: its tokens are not kept.
      await store.deleteTimedOutSession(this.options.sql, hash, this.options.idleMinutes);
      return undefined;
    }
    const session = this.sessionOf(hash, row);
    if (session === undefined) {
      // Sealed before the console kept a token per resource: signing in again makes a new one.
      await store.deleteSession(this.options.sql, hash);
      return undefined;
    }
    return refreshDue(row) ? this.refreshed(hash) : session;
  }

  async end(hash: Buffer): Promise<void> {
    await store.deleteSession(this.options.sql, hash);
  }

  /**
   * Ends the session, timed out or not, and answers its ID token: the sign-out's hint that the
   * provider session it names ends too. Undefined when there was no session or it held none.
   */
  async signOut(hash: Buffer): Promise<string | undefined> {
    const sealed = await store.takeSession(this.options.sql, hash);
    return sealed && this.options.sealer.open<Partial<SessionTokens>>(sealed, hash).idToken;
  }

  endAllOf(by: { sid?: string; sub?: string }): Promise<number> {
    return store.deleteSessionsOf(this.options.sql, by);
  }

  deleteExpired(): Promise<void> {
    return store.deleteExpired(this.options.sql, this.options.idleMinutes);
  }

  /** The row as a session; undefined when its sealed tokens are not one token per resource. */
  private sessionOf(hash: Buffer, row: store.SessionRow): Session | undefined {
    const tokens = this.options.sealer.open<Partial<SessionTokens>>(row.sealedTokens, hash);
    if (typeof tokens.access !== "object" || tokens.access === null) return undefined;
    return { hash, sub: row.accountSub, sid: row.sid ?? undefined, tokens: tokens as SessionTokens };
  }

  private async refreshed(hash: Buffer): Promise<Session | undefined> {
    const { sql, sealer, logger } = this.options;
    return (await sql.begin(async (tx) => {
      const row = await store.lockSession(tx as unknown as Sql, hash);
      if (!row) return undefined;
      const session = this.sessionOf(hash, row);
      if (!session) return undefined;
      // Another request (or process) may have refreshed while this one waited for the lock.
      if (!refreshDue(row)) return session;
      try {
        const tokens = await this.refreshAll(session.tokens);
        await store.updateSessionTokens(
          tx as unknown as Sql,
          hash,
          sealer.seal(tokens, hash),
          new Date(firstExpiry(tokens)),
        );
        return { ...session, tokens };
      } catch (error) {
        logger.info("token refresh failed; the session ends", { sub: session.sub, error: String(error) });
        await store.deleteSession(tx as unknown as Sql, hash);
        return undefined;
      }
    })) as Session | undefined;
  }

  /**
   * Every token the session holds, refreshed for its own resource, one after the other (each
   * refresh rotates the refresh token the next one spends). They were issued together and the
   * row's access_expires_at is the first of their expiries, so all are renewed when it is due.
   * A resource the provider now refuses (a role removed) is dropped and its pages are no longer
   * offered; a refused account-portal token ends the session, like any other failure.
   */
  private async refreshAll(current: SessionTokens): Promise<SessionTokens> {
    let tokens = current;
    for (const resource of CONSOLE_RESOURCES) {
      if (tokens.access[resource] === undefined) continue;
      const renewed = await this.options.relyingParty.refreshFor(tokens, resource);
      if (renewed === undefined && resource === "account-portal")
        throw new Error("the provider refused the account-portal token");
      tokens = renewed ?? withoutResource(tokens, resource);
    }
    return tokens;
  }
}
