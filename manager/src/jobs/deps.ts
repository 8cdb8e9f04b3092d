import type { Logger } from "@tjm/platform";
import type { ObjectTail } from "@tjm/storage";
import type { OperatorTrigger, Resolution } from "../lifecycle/index.ts";
import type { Sql, Statement, TransactionSql } from "../platform/db.ts";
import type { LiveProgress } from "./view.ts";

export interface JobsDeps {
  sql: Sql;
  logger: Logger;
  liveProgress: LiveProgress;
  /** A job not finished this long after submission fails with DEADLINE_EXCEEDED. */
  jobDeadlineHours: number;
  /**
   * Applies an operator's request to the job's current attempt (execution's transition
   * applier, the one every trigger goes through); undefined when there is no such job.
   */
  applyOperatorRequest: (
    tx: TransactionSql,
    jobId: string,
    trigger: OperatorTrigger,
  ) => Promise<Resolution | undefined>;
  /**
   * Stores a submitted job: its insert, built on the connection given, goes in a scheduling pass
   * when the scheduler may lease the job at once (`scheduled`: no wake-up needed), or alone.
   */
  storeJob: <T>(
    insert: (sql: Sql | TransactionSql) => Statement<T>,
  ) => Promise<{ inserted: T; scheduled: boolean }>;
  /** The last `maxBytes` of an object in the store (an attempt's log); InputNotFoundError when it is not there. */
  readLogTail: (logsUri: string, maxBytes: number) => Promise<ObjectTail>;
}
