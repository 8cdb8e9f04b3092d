import { createRouter } from "../platform/http.ts";
import { cancelJob, cancelJobRoute } from "./cancel.ts";
import type { JobsDeps } from "./deps.ts";
import { getJob, getJobRoute } from "./get.ts";
import { listJobsHandler, listJobsRoute } from "./list.ts";
import { retryJob, retryJobRoute } from "./retry.ts";
import { submitJob, submitJobRoute } from "./submit.ts";

/** The jobs room: mounted under /api/v1/operations behind operator auth. */
export function jobsApp(deps: JobsDeps) {
  return createRouter()
    .openapi(submitJobRoute, submitJob(deps))
    .openapi(listJobsRoute, listJobsHandler(deps))
    .openapi(getJobRoute, getJob(deps))
    .openapi(cancelJobRoute, cancelJob(deps))
    .openapi(retryJobRoute, retryJob(deps));
}

export type { JobsDeps } from "./deps.ts";
export { compactJobCounts } from "./store.ts";
