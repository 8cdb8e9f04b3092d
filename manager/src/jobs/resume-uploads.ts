import { z } from "@hono/zod-openapi";
import { operatorRoute, tenantRoute } from "../identity/tokens/audiences.ts";
import { tenantMayActOn } from "../identity/tokens/principals.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { uuidPathParam } from "../platform/routes.ts";
import type { JobsDeps } from "./deps.ts";
import { jobDetail } from "./detail.ts";
import { JobIdParamsSchema, jobDetailAccepted } from "./schema.ts";
import { findJobDetail } from "./store.ts";

const description =
  "For a job WAITING_FOR_STORAGE: the Worker that kept the encoded outputs uploads them again to the same destinations, without re-encoding, now or when it is back. Retention (24 h from the first pause, bounded by the job deadline) is not renewed. 409 when the job is not waiting, its retention or deadline passed, or that Worker is gone or disabled. The job stays WAITING_FOR_STORAGE (with uploadResumeRequestedAt set) until the Worker reports it is uploading again.";

const responses = jobDetailAccepted("Resume requested; the job detail with uploadResumeRequestedAt set");

export const resumeUploadsRoute = operatorRoute({
  method: "post",
  path: "/jobs/{jobId}/resume-uploads",
  tags: ["jobs"],
  summary: "Resume the uploads of a job waiting for storage",
  operationId: "resumeJobUploads",
  description,
  request: { params: JobIdParamsSchema },
  responses,
  errors: ["job.not_found", "job.not_resumable"],
});

export const ProjectJobParamsSchema = z.object({
  projectId: uuidPathParam("projectId", "6f1c2a90-1d7e-4f39-8b7a-1f0e2d3c4b5a"),
  ...JobIdParamsSchema.shape,
});

export const tenantResumeUploadsRoute = tenantRoute({
  method: "post",
  path: "/{projectId}/jobs/{jobId}/resume-uploads",
  tags: ["tenant"],
  summary: "Resume the uploads of one of your project's jobs",
  operationId: "resumeProjectJobUploads",
  description: `${description} Needs a tenant token whose tjm_projects claim grants the project (403 otherwise); 404 when the job is not in that project.`,
  request: { params: ProjectJobParamsSchema },
  responses,
  errors: ["auth.project_forbidden", "job.not_found", "job.not_resumable"],
});

function resume(deps: JobsDeps, jobId: string, projectId?: string) {
  return deps.sql.begin(async (tx) => {
    // A job's project never changes: it is read before the request locks the job.
    const found = await findJobDetail(tx, jobId);
    const resolution =
      found && (!projectId || found.job.projectId === projectId)
        ? await deps.applyOperatorRequest(tx, jobId, "resume-uploads")
        : undefined;
    if (!resolution) {
      throw new ApiError(
        "job.not_found",
        projectId ? `Job ${jobId} does not exist in project ${projectId}` : `Job ${jobId} does not exist`,
      );
    }
    if (resolution.kind === "refused") throw new ApiError("job.not_resumable", resolution.reason);
    return jobDetail(tx, jobId, deps.liveProgress);
  });
}

export const resumeUploadsHandler =
  (deps: JobsDeps): AppRouteHandler<typeof resumeUploadsRoute> =>
  async (c) => {
    const { jobId } = c.req.valid("param");
    const detail = await resume(deps, jobId);
    deps.logger.info("job uploads resume requested", {
      requestId: c.get("requestId"),
      jobId,
      operator: c.get("operator").subject,
    });
    return c.json(detail, 202);
  };

export const tenantResumeUploadsHandler =
  (deps: JobsDeps): AppRouteHandler<typeof tenantResumeUploadsRoute> =>
  async (c) => {
    const { projectId, jobId } = c.req.valid("param");
    if (!tenantMayActOn(c.get("tenant"), projectId)) {
      throw new ApiError(
        "auth.project_forbidden",
        `The token's tjm_projects claim does not grant project ${projectId}`,
      );
    }
    const detail = await resume(deps, jobId, projectId);
    deps.logger.info("job uploads resume requested", {
      requestId: c.get("requestId"),
      jobId,
      tenant: c.get("tenant").subject,
    });
    return c.json(detail, 202);
  };
