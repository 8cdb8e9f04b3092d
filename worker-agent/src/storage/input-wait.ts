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
 * starts with the first and ends when none is left, and its limit counts from its start.
 * Whoever holds the attempt is told when the wait starts, when its last error changes (at most
 * once per `updateEveryMs`) and when it ends. Once a wait has run out, the attempt waits no
 * more: any later read fails after its own budget.
 */
import { setTimeout as delay } from "node:timers/promises";
import { StorageUnavailableError } from "@tjm/storage";

export interface InputWaitState {
  since: Date;
  /** The last failure, one line. */
  lastError: string;
}

export type InputWaitEnd = "answered" | "expired" | "aborted";

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
  /**
   * The wait started (state), its last error changed (state), or it ended (undefined, and how:
   * the store answered, the wait ran out, or the attempt was cancelled or stopped).
   */
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
   * StorageUnavailableError starts or joins the wait; any other error ends this read's part in
   * it and is thrown as it is.
   */
  async run<T>(read: () => Promise<T>): Promise<T> {
    const { signal } = this.options;
    let joined = false;
    let ended: InputWaitEnd = "answered";
    try {
      for (let round = 0; ; round++) {
        try {
          signal.throwIfAborted();
          return await read();
        } catch (error) {
          if (signal.aborted) {
            ended = "aborted";
            throw signal.reason;
          }
          if (!(error instanceof StorageUnavailableError)) throw error;
          if (this.expired) {
            ended = "expired";
            throw new InputWaitExpiredError(this.expired.waitedMs, error);
          }
          if (!joined) {
            joined = true;
            this.join(error);
          } else this.failedAgain(error);
          const state = this.state as InputWaitState;
          const waitedMs = this.clock.now() - state.since.getTime();
          if (waitedMs >= this.options.limitMs) {
            ended = "expired";
            this.expired = new InputWaitExpiredError(waitedMs, error);
            throw this.expired;
          }
          await this.clock
            .sleep(this.pauseBefore(round, this.options.limitMs - waitedMs), signal)
            .catch(() => {
              ended = "aborted";
              throw signal.reason;
            });
        }
      }
    } finally {
      if (joined) this.leave(ended);
    }
  }

  private pauseBefore(round: number, remainingMs: number): number {
    const step = Math.min(this.options.pauseMs, (this.options.pauseMs / 8) * 2 ** Math.min(round, 3));
    return Math.max(1, Math.min(Math.round(step / 2 + (this.clock.random() * step) / 2), remainingMs));
  }

  private join(error: StorageUnavailableError): void {
    this.waiters++;
    if (this.state) {
      this.failedAgain(error);
      return;
    }
    this.state = { since: new Date(this.clock.now()), lastError: oneLine(error.message) };
    this.notify();
  }

  private failedAgain(error: StorageUnavailableError): void {
    const state = this.state as InputWaitState;
    state.lastError = oneLine(error.message);
    const everyMs = this.options.updateEveryMs ?? DEFAULT_UPDATE_EVERY_MS;
    if (state.lastError !== this.notifiedError && this.clock.now() - this.lastNotifiedAt >= everyMs)
      this.notify();
  }

  private leave(ended: InputWaitEnd): void {
    this.waiters--;
    if (this.waiters > 0) return;
    this.state = undefined;
    this.notifiedError = "";
    this.options.onChange(undefined, ended);
  }

  private notify(): void {
    const state = this.state as InputWaitState;
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
