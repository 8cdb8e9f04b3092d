import type { Logger } from "@tjm/platform";
import type { Sql } from "../platform/db.ts";
import { compactJobCounts } from "./store.ts";

const COMPACTION_INTERVAL_MS = 1000;

/** Keeps the list route's totals cheap by folding count deltas every second. */
export function startJobCountCompaction(sql: Sql, logger: Logger): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = compactJobCounts(sql).catch((err) => logger.warn("job count compaction failed", { err }));
  }, COMPACTION_INTERVAL_MS);
  return async () => {
    clearInterval(timer);
    await running;
  };
}
