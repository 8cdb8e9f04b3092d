import type { OperatorTrigger } from "../lifecycle/index.ts";
import type { Sql, TransactionSql } from "../platform/db.ts";
import { conflict, notFound } from "../platform/errors.ts";
import type { JobsDeps } from "./deps.ts";
import type { JobDetail } from "./schema.ts";
import { findJobDetail } from "./store.ts";
import { type LiveProgress, toJobDetail } from "./view.ts";

/** The job as the API shows it in detail; 404 when there is no such job. */
export async function jobDetail(
  sql: Sql | TransactionSql,
  jobId: string,
  live: LiveProgress,
): Promise<JobDetail> {
  const found = await findJobDetail(sql, jobId);
  if (!found) throw notFound(`Job ${jobId} does not exist`);
  return toJobDetail(found.job, found.attempts, live);
}

/**
 * An operator's request on a job, applied when the lifecycle table allows it in the job's
 * state and refused with the table's reason (409) otherwise; answers the job's detail after it.
 */
export function requestJobTransition(
  deps: JobsDeps,
  jobId: string,
  trigger: Extract<OperatorTrigger, "cancel-requested" | "retry">,
): Promise<JobDetail> {
  return deps.sql.begin(async (tx) => {
    const resolution = await deps.applyOperatorRequest(tx, jobId, trigger);
    if (!resolution) throw notFound(`Job ${jobId} does not exist`);
    if (resolution.kind === "refused") throw conflict(resolution.reason);
    return jobDetail(tx, jobId, deps.liveProgress);
  });
}
