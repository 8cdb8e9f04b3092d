/**
 * Undo steps registered as resources are made (child processes, schemas, servers) and run
 * newest first, once: from the run's `finally` or from a signal, whichever comes first.
 */
export class Cleanup {
  private readonly steps: { what: string; undo: () => Promise<void> }[] = [];
  private running: Promise<void> | undefined;

  defer(what: string, undo: () => Promise<void>): void {
    this.steps.push({ what, undo });
  }

  run(log: (line: string) => void): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.undo();
        } catch (err) {
          log(`cleanup: ${step.what} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    })();
    return this.running;
  }

  /**
   * Ctrl-C, a kill or an exception nothing caught still stops the Managers and drops the
   * schemas before exiting.
   */
  runOnSignals(log: (line: string) => void): void {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      process.once(signal, () => {
        log(`${signal}: cleaning up`);
        void this.run(log).then(() => process.exit(130));
      });
    }
    process.once("uncaughtException", (err) => {
      log(`uncaught exception, cleaning up: ${err.stack ?? err.message}`);
      void this.run(log).then(() => process.exit(1));
    });
  }
}
