/**
 * An attempt waiting out a storage outage while it reads what it encodes from (its input
 * through the relay, a download of it, a subtitle or a watermark). Each read keeps its own
 * retry budget; once a budget is spent the read does not fail the attempt: it tries again
 * after a pause, round after round, until the store answers, the attempt is cancelled or
 * stopped, or the outage has lasted the longest wait (WORKER_INPUT_WAIT_MAX_MS). Meanwhile
 * ffmpeg is held on its read and keeps everything it encoded: the same attempt goes on where
 * it stopped. Failing the attempt instead would throw the encode away, and STORAGE_UNAVAILABLE
 * fails the job.
 *
 * Reads that wait at the same time (ffmpeg's and ffprobe's, two downloads) share one wait: it
 * starts with the first, ends at the first answer from the store, and its limit counts from its
 * start.
 * Whoever holds the attempt is told when the wait starts, when its last error changes (at most
 * once per `updateEveryMs`) and when it ends. Once a wait has run out, the attempt waits no
 * more: any later read fails after its own budget.
 */
import { setTimeout as delay } from "node:timers/promises";
import { StorageUnavailableError } from "@tjm/storage";
import { backoffDelayMs } from "../platform/backoff.ts";

export interface InputWaitState {
  since: Date;
  /** The last failure, one line. */
  lastError: string;
}

/**
 * How a wait ended: the store answered a read, the wait ran out, the attempt was cancelled or
 * stopped, or every read in it was abandoned by its reader.
 */
export type InputWaitEnd = "answered" | "expired" | "aborted" | "abandoned";

export interface InputWaitClock {
  now(): number;
  random(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface InputWaitOptions {
  /** The longest one outage is waited out. */
  limitMs: number;
  /**
   * The longest pause between two rounds; each pause is drawn from its upper half. The round's
   * own budget comes first, so the store's return is seen at most this long after it.
   */
  pauseMs: number;
  /** The attempt's: aborting it ends every wait at once, with its reason. */
  signal: AbortSignal;
  /** The wait started (state), its last error changed (state), or it ended (undefined, and how). */
  onChange: (state: InputWaitState | undefined, ended?: InputWaitEnd) => void;
  /** How often a changed last error is passed on at most. Default 60 s. */
  updateEveryMs?: number;
  clock?: Partial<InputWaitClock>;
}

/** The wait ran out: the attempt fails STORAGE_UNAVAILABLE with this. */
export class InputWaitExpiredError extends Error {
  override readonly name = "InputWaitExpiredError";
  constructor(
    readonly waitedMs: number,
    cause: StorageUnavailableError,
  ) {
    super(
      `storage stayed unavailable for ${formatDuration(waitedMs)}, the longest an attempt waits for its input (WORKER_INPUT_WAIT_MAX_MS); last error: ${cause.message}`,
      { cause },
    );
  }
}

const systemClock: InputWaitClock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep: (ms, signal) => delay(ms, undefined, { signal }),
};

const DEFAULT_UPDATE_EVERY_MS = 60_000;

export class InputWait {
  private readonly clock: InputWaitClock;
  /** Reads in the wait now. */
  private waiters = 0;
  private state: InputWaitState | undefined;
  private lastNotifiedAt = 0;
  private notifiedError = "";
  private expired: InputWaitExpiredError | undefined;

  constructor(private readonly options: InputWaitOptions) {
    this.clock = { ...systemClock, ...options.clock };
  }

  /**
   * Runs `read` (a storage read with its own retry budget) until it succeeds. Its
   * StorageUnavailableError starts or joins the wait; any other error is thrown as it is. The
   * first answer from the store (data, or a refusal) ends the wait for every read in it: the
   * store is back, and the others get theirs on their next round. `readSignal` is the reader's
   * own (a reader that hung up, ffprobe done or the relay closed): its read leaves the wait
   * without ending it.
   */
  async run<T>(read: () => Promise<T>, readSignal?: AbortSignal): Promise<T> {
    const attempt = this.options.signal;
    const signal = readSignal ? AbortSignal.any([attempt, readSignal]) : attempt;
    let joined = false;
    try {
      for (let round = 0; ; round++) {
        try {
          signal.throwIfAborted();
          const answer = await read();
          this.end("answered");
          return answer;
        } catch (error) {
          if (attempt.aborted) {
            this.end("aborted");
            throw attempt.reason;
          }
          if (readSignal?.aborted) throw error;
          if (!(error instanceof StorageUnavailableError)) {
            this.end("answered");
            throw error;
          }
          if (this.expired) throw new InputWaitExpiredError(this.expired.waitedMs, error);
          if (!joined) {
            joined = true;
            this.waiters++;
          }
          const state = this.failed(error);
          const waitedMs = this.clock.now() - state.since.getTime();
          if (waitedMs >= this.options.limitMs) {
            this.expired = new InputWaitExpiredError(waitedMs, error);
            this.end("expired");
            throw this.expired;
          }
          await this.clock
            .sleep(this.pauseBefore(round, this.options.limitMs - waitedMs), signal)
            .catch(() => {
              if (attempt.aborted) this.end("aborted");
              throw attempt.aborted ? attempt.reason : error;
            });
        }
      }
    } finally {
      if (joined) this.leave();
    }
  }

  /** Doubling from an eighth of pauseMs to pauseMs, and never past the wait's limit. */
  private pauseBefore(round: number, remainingMs: number): number {
    const { pauseMs } = this.options;
    const pause = backoffDelayMs(round, { initialMs: pauseMs / 8, maxMs: pauseMs }, this.clock.random);
    return Math.max(1, Math.min(pause, remainingMs));
  }

  /** A read spent its budget: the wait starts, or its last error is the new one. */
  private failed(error: StorageUnavailableError): InputWaitState {
    const lastError = oneLine(error.message);
    if (!this.state) {
      this.state = { since: new Date(this.clock.now()), lastError };
      this.notify(this.state);
      return this.state;
    }
    this.state.lastError = lastError;
    const everyMs = this.options.updateEveryMs ?? DEFAULT_UPDATE_EVERY_MS;
    if (lastError !== this.notifiedError && this.clock.now() - this.lastNotifiedAt >= everyMs)
      this.notify(this.state);
    return this.state;
  }

  /** Every read in the wait left it without an answer (their readers hung up): it is over. */
  private leave(): void {
    this.waiters--;
    if (this.waiters === 0) this.end("abandoned");
  }

  private end(ended: InputWaitEnd): void {
    if (!this.state) return;
    this.state = undefined;
    this.notifiedError = "";
    this.options.onChange(undefined, ended);
  }

  private notify(state: InputWaitState): void {
    this.lastNotifiedAt = this.clock.now();
    this.notifiedError = state.lastError;
    this.options.onChange({ ...state });
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 500);
}

function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
