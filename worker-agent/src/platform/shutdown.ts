/**
 * Runs `stop` once on the first SIGTERM or SIGINT. A stop that outlives the deadline (a hung
 * NATS drain, say) ends the process anyway, so a supervisor's own kill timeout is never the
 * thing that stops us; a second signal ends it at once.
 */
import type { Logger } from "@tjm/platform";

export const SHUTDOWN_DEADLINE_MS = 15_000;

export function stopOnSignals(options: {
  stop: () => Promise<void>;
  logger: Logger;
  exit: (code: number) => void;
  deadlineMs?: number;
}): void {
  let signalled = false;
  const handle = (signal: NodeJS.Signals) => {
    if (signalled) {
      options.logger.warn("second signal; exiting without waiting for the stop to finish", { signal });
      options.exit(1);
      return;
    }
    signalled = true;
    const deadlineMs = options.deadlineMs ?? SHUTDOWN_DEADLINE_MS;
    options.logger.info("stopping", { signal, deadlineMs });
    setTimeout(() => {
      options.logger.error("the stop did not finish within its deadline; exiting", { deadlineMs });
      options.exit(1);
    }, deadlineMs).unref();
    void options.stop();
  };
  process.on("SIGTERM", handle);
  process.on("SIGINT", handle);
}
