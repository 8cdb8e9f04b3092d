import type { Logger } from "@tjm/platform";
import type { ObjectTail } from "@tjm/storage";
import type { Sql, TransactionSql } from "../platform/db.ts";
import type { LiveProgress } from "./view.ts";

export interface JobsDeps {
  sql: Sql;
  logger: Logger;
  liveProgress: LiveProgress;
  /** A job not finished this long after submission fails with DEADLINE_EXCEEDED. */
  jobDeadlineHours: number;
  /** Tells the Worker holding the attempt, if any, to stop it (execution feature). */
  cancelHeldAttempt: (tx: TransactionSql, attemptId: string) => Promise<void>;
  /** Asks the Worker keeping the attempt's outputs to upload them again; the reason when it cannot. */
  resumeUploads: (tx: TransactionSql, attemptId: string) => Promise<string | undefined>;
  /** The last `maxBytes` of an object in the store (an attempt's log); InputNotFoundError when it is not there. */
  readLogTail: (logsUri: string, maxBytes: number) => Promise<ObjectTail>;
}
