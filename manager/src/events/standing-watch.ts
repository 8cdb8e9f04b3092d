import type { Logger } from "@tjm/platform";
import type { JWTPayload } from "jose";
import type { Standing, StandingQuestion } from "../identity/tokens/standing.ts";

/** 2 s: an open stream outlives its token's revocation by at most this (SSE_STANDING_CHECK_MS). */
export const STANDING_CHECK_MS = 2000;

/** setTimeout's longest delay (about 24.8 days); a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface StandingWatchOptions {
  /** TJM's issuer: only its tokens have a standing to re-check; others end at their expiry only. */
  tjmIssuer: string;
  intervalMs: number;
  /** One query for many tokens (identity/tokens/standing.ts `tokenStandings`). */
  standings: (questions: readonly StandingQuestion[]) => Promise<Standing[]>;
  logger: Logger;
}

/** One token and the open streams it authorised: one question and one expiry timer for all of them. */
interface WatchedToken {
  key: string;
  claims: JWTPayload;
  ends: Set<() => void>;
  expiryTimer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Ends open event streams whose token stopped standing: a stream is authorised once, when it
 * opens, and would otherwise outlive a disabled account, a bumped authorization version or an
 * ended sign-in session for as long as the client stays connected. Streams are grouped by
 * token (the same claims: a dashboard's many tabs, a relay's reconnects): every tick asks once
 * per distinct TJM token of this process, all in one query, and a token that no longer stands
 * ends all its streams; every token also ends its streams at its expiry, with one timer. The
 * clients reconnect and are answered 401 or 403.
 */
export class StandingWatch {
  private readonly tokens = new Map<string, WatchedToken>();
  private readonly checked = new Set<WatchedToken>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking = false;

  constructor(private readonly options: StandingWatchOptions) {}

  /** Watches one stream's token until the returned function is called; `end` is called at most once. */
  watch(claims: JWTPayload, end: () => void): () => void {
    const key = JSON.stringify(claims);
    let token = this.tokens.get(key);
    if (!token) {
      token = { key, claims, ends: new Set(), expiryTimer: undefined };
      this.tokens.set(key, token);
      this.armExpiry(token, typeof claims.exp === "number" ? claims.exp * 1000 : Date.now());
      if (this.tokens.get(key) === token && claims.iss === this.options.tjmIssuer) {
        this.checked.add(token);
        this.timer ??= setInterval(() => void this.check(), this.options.intervalMs);
      }
    }
    if (this.tokens.get(key) !== token) {
      // Expired already: the stream ends at once.
      end();
      return () => {};
    }
    const watched = token;
    const once = () => {
      if (watched.ends.delete(once)) end();
    };
    watched.ends.add(once);
    return () => {
      watched.ends.delete(once);
      if (watched.ends.size === 0) this.forget(watched);
    };
  }

  private armExpiry(token: WatchedToken, expiresAtMs: number): void {
    const left = expiresAtMs - Date.now();
    if (left <= 0) this.endAll(token);
    else
      token.expiryTimer = setTimeout(() => this.armExpiry(token, expiresAtMs), Math.min(left, MAX_TIMER_MS));
  }

  private endAll(token: WatchedToken): void {
    this.forget(token);
    for (const end of [...token.ends]) end();
  }

  private forget(token: WatchedToken): void {
    clearTimeout(token.expiryTimer);
    if (this.tokens.get(token.key) === token) this.tokens.delete(token.key);
    this.checked.delete(token);
    if (this.checked.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async check(): Promise<void> {
    // A slow database is not asked again before it answered.
    if (this.checking || this.checked.size === 0) return;
    this.checking = true;
    try {
      const tokens = [...this.checked];
      const standings = await this.options.standings(
        tokens.map(({ claims }) => ({ claims, resource: "operations" })),
      );
      tokens.forEach((token, index) => {
        if (standings[index]?.ok === false) this.endAll(token);
      });
    } catch (err) {
      // PostgreSQL away for a tick: the streams stay, the next tick decides.
      this.options.logger.warn("could not re-check the tokens of open event streams", { err });
    } finally {
      this.checking = false;
    }
  }
}
