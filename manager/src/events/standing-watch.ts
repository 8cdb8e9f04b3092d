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

interface WatchedStream {
  claims: JWTPayload;
  end: () => void;
}

/**
 * Ends open event streams whose token stopped standing: a stream is authorised once, when it
 * opens, and would otherwise outlive a disabled account, a bumped authorization version or an
 * ended sign-in session for as long as the client stays connected. Every tick asks once for all
 * open streams of this process carrying a TJM token; every stream also ends at its token's
 * expiry. The client reconnects and is answered 401 or 403.
 */
export class StandingWatch {
  private readonly checked = new Set<WatchedStream>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly options: StandingWatchOptions) {}

  /** Watches one stream's token until the returned function is called; `end` is called at most once. */
  watch(claims: JWTPayload, end: () => void): () => void {
    let expiryTimer: NodeJS.Timeout | undefined;
    let watching = true;
    const stream: WatchedStream = {
      claims,
      end: () => {
        if (!watching) return;
        unwatch();
        end();
      },
    };
    const unwatch = () => {
      watching = false;
      clearTimeout(expiryTimer);
      this.checked.delete(stream);
      if (this.checked.size === 0) this.stopTicking();
    };
    const expiresAtMs = typeof claims.exp === "number" ? claims.exp * 1000 : Date.now();
    const armExpiry = () => {
      const left = expiresAtMs - Date.now();
      if (left <= 0) stream.end();
      else expiryTimer = setTimeout(armExpiry, Math.min(left, MAX_TIMER_MS));
    };
    armExpiry();
    if (watching && claims.iss === this.options.tjmIssuer) {
      this.checked.add(stream);
      this.timer ??= setInterval(() => void this.check(), this.options.intervalMs);
    }
    return unwatch;
  }

  private stopTicking(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async check(): Promise<void> {
    // A slow database is not asked again before it answered.
    if (this.checking || this.checked.size === 0) return;
    this.checking = true;
    try {
      const streams = [...this.checked];
      const standings = await this.options.standings(
        streams.map(({ claims }) => ({ claims, resource: "operations" })),
      );
      streams.forEach((stream, index) => {
        if (standings[index]?.ok === false) stream.end();
      });
    } catch (err) {
      // PostgreSQL away for a tick: the streams stay, the next tick decides.
      this.options.logger.warn("could not re-check the tokens of open event streams", { err });
    } finally {
      this.checking = false;
    }
  }
}
