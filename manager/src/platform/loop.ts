import type { Logger } from "@tjm/platform";

/** How often a loop or task runs when nothing wakes it, unless its options say otherwise. */
const DEFAULT_TICK_MS = 1000;

interface TickOptions {
  tickMs?: number;
  logger: Logger;
}

/**
 * A background task that runs when woken and on a tick: never two runs at once, a wake during
 * a run means one more run right after it, and a run that did work is followed by another
 * (there may be more). The dispatcher and the promoter are such loops.
 */
export abstract class WakeableLoop {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  /** `what` a run does names it in the warning when one fails. */
  constructor(
    private readonly loop: TickOptions,
    private readonly what: string,
  ) {}

  /** One run; true when it did work and another run may find more. */
  protected abstract pass(): Promise<boolean>;

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Runs now, or right after the run in progress. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.begin(() => this.pass());
  }

  /**
   * Runs `run` as this loop's run (never beside another of its runs) when the loop is started
   * and idle; false when it is not, and the caller does its work another way.
   */
  protected runNow(run: () => Promise<boolean>): boolean {
    if (this.stopped || this.running) return false;
    this.begin(run);
    return true;
  }

  private begin(run: () => Promise<boolean>): void {
    clearTimeout(this.timer);
    this.running = run()
      .then((more) => {
        if (more) this.again = true;
      })
      .catch((err) => this.loop.logger.warn(`${this.what} failed; retrying at the next tick`, { err }))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.timer = setTimeout(() => this.wake(), this.loop.tickMs ?? DEFAULT_TICK_MS);
      });
  }
}

/**
 * A background task that runs every tick, the first one a tick after start; a tick that
 * finds the last run still going is skipped. The sweeper and the command-consumer keeper
 * are such tasks.
 */
export abstract class TickingTask {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;

  /** `failure` is the warning logged when a run fails. */
  constructor(
    private readonly task: TickOptions,
    private readonly failure: string,
  ) {}

  protected abstract tick(): Promise<void>;

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.tick()
        .catch((err) => this.task.logger.warn(this.failure, { err }))
        .finally(() => {
          this.running = undefined;
        });
    }, this.task.tickMs ?? DEFAULT_TICK_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
