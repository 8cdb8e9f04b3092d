import { createRouter } from "../platform/http.ts";
import { getAttemptLog, getAttemptLogRoute } from "./attempt-log.ts";
import { cancelJob, cancelJobRoute } from "./cancel.ts";
import type { JobsDeps } from "./deps.ts";
import { getJob, getJobRoute } from "./get.ts";
import { listJobsHandler, listJobsRoute } from "./list.ts";
import {
  resumeUploadsHandler,
  resumeUploadsRoute,
  tenantResumeUploadsHandler,
  tenantResumeUploadsRoute,
} from "./resume-uploads.ts";
import { retryJob, retryJobRoute } from "./retry.ts";
import { submitJob, submitJobRoute } from "./submit.ts";

/** The jobs room: mounted under /api/v1/operations behind operator auth. */
export function jobsApp(deps: JobsDeps) {
  return createRouter()
    .openapi(submitJobRoute, submitJob(deps))
    .openapi(listJobsRoute, listJobsHandler(deps))
    .openapi(getJobRoute, getJob(deps))
    .openapi(getAttemptLogRoute, getAttemptLog(deps))
    .openapi(cancelJobRoute, cancelJob(deps))
    .openapi(retryJobRoute, retryJob(deps))
    .openapi(resumeUploadsRoute, resumeUploadsHandler(deps));
}

/** Tenant job routes: mounted under /api/v1/projects behind tenant auth. */
export function tenantJobsApp(deps: JobsDeps) {
  return createRouter().openapi(tenantResumeUploadsRoute, tenantResumeUploadsHandler(deps));
}

export type { JobsDeps } from "./deps.ts";
export { compactJobCounts } from "./store.ts";
