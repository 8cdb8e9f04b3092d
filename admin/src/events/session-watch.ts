/**
 * Ends open event streams within seconds of their session ending in PostgreSQL, whatever ended
 * it: sign-out or back-channel logout in any Admin process, or a timeout. Each tick asks once
 * for all open streams of this process, however many sessions they belong to. A token the
 * Manager stops accepting (account disabled, role removed) is not its concern: the Manager ends
 * that stream itself (relay.ts).
 */
import type { Logger } from "@tjm/platform";
import type { Sql } from "../platform/db.ts";

export interface SessionWatchOptions {
  sql: Sql;
  /** ADMIN_SESSION_IDLE_MINUTES: a session idle this long has ended even while its row remains. */
  idleMinutes: number;
  intervalMs: number;
  logger: Logger;
}

/**
 * Which of these sessions (id hashes, hex) are still live: both timeouts checked, as on every
 * request. Hex text, because postgres.js sends an array of Buffers as one bytea.
 */
async function liveSessionHashes(sql: Sql, hashes: string[], idleMinutes: number): Promise<Set<string>> {
  const rows = await sql<{ idHash: string }[]>`
    select encode(id_hash, 'hex') as id_hash from admin_sessions
    where id_hash in (select decode(hash, 'hex') from unnest(${hashes}::text[]) as hash)
      and expires_at > now() and last_seen_at > now() - ${`${idleMinutes} minutes`}::interval`;
  return new Set(rows.map((row) => row.idHash));
}

export class SessionWatch {
  /** The end functions of the open streams, by session id hash (hex). */
  private readonly streams = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly options: SessionWatchOptions) {}

  /** Watches one stream of a session until the returned function is called. */
  watch(sessionHash: Buffer, end: () => void): () => void {
    const key = sessionHash.toString("hex");
    let ends = this.streams.get(key);
    if (!ends) {
      ends = new Set();
      this.streams.set(key, ends);
    }
    ends.add(end);
    this.timer ??= setInterval(() => void this.check(), this.options.intervalMs);
    return () => {
      const current = this.streams.get(key);
      current?.delete(end);
      if (current?.size === 0) this.streams.delete(key);
      if (this.streams.size === 0) this.stopTicking();
    };
  }

  /** Ends every open stream (at shutdown). */
  stop(): void {
    for (const ends of [...this.streams.values()]) for (const end of [...ends]) end();
    this.stopTicking();
  }

  private stopTicking(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async check(): Promise<void> {
    // A slow database is not asked again before it answered.
    if (this.checking || this.streams.size === 0) return;
    this.checking = true;
    try {
      const watched = [...this.streams.entries()];
      const live = await liveSessionHashes(
        this.options.sql,
        watched.map(([key]) => key),
        this.options.idleMinutes,
      );
      for (const [key, ends] of watched) {
        if (!live.has(key)) for (const end of [...ends]) end();
      }
    } catch (error) {
      // PostgreSQL away for a tick: the streams stay, the next tick decides.
      this.options.logger.warn("could not check the sessions of open event streams", {
        error: String(error),
      });
    } finally {
      this.checking = false;
    }
  }
}
