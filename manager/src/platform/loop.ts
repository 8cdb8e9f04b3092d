/**
 * A background task that runs when woken and on a tick: never two runs at once, a wake during
 * a run means one more run right after it, and a run that did work is followed by another
 * (there may be more). Used by the dispatcher and the promoter.
 */
import type { Logger } from "@tjm/platform";

export class WakeableLoop {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  /** `pass` returns true when it did work and another pass may find more. */
  constructor(
    private readonly pass: () => Promise<boolean>,
    private readonly options: { tickMs: number; logger: Logger; what: string },
  ) {}

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
    clearTimeout(this.timer);
    this.running = this.pass()
      .then((more) => {
        if (more) this.again = true;
      })
      .catch((err) =>
        this.options.logger.warn(`${this.options.what} failed; retrying at the next tick`, { err }),
      )
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.timer = setTimeout(() => this.wake(), this.options.tickMs);
      });
  }
}
