import type { OperatorTrigger } from "../lifecycle/index.ts";
import type { Sql, TransactionSql } from "../platform/db.ts";
import { ApiError } from "../platform/errors.ts";
import type { JobsDeps } from "./deps.ts";
import type { JobDetail } from "./schema.ts";
import { findJobDetail } from "./store.ts";
import { type LiveProgress, toJobDetail } from "./view.ts";

export const jobNotFound = (jobId: string) => new ApiError("job.not_found", `Job ${jobId} does not exist`);

/** The job as the API shows it in detail; 404 when there is no such job. */
export async function jobDetail(
  sql: Sql | TransactionSql,
  jobId: string,
  live: LiveProgress,
): Promise<JobDetail> {
  const found = await findJobDetail(sql, jobId);
  if (!found) throw jobNotFound(jobId);
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
    if (!resolution) throw jobNotFound(jobId);
    if (resolution.kind === "refused") {
      throw new ApiError(
        trigger === "retry" ? "job.not_retryable" : "job.not_cancellable",
        resolution.reason,
      );
    }
    return jobDetail(tx, jobId, deps.liveProgress);
  });
}
