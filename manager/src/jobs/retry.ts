import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { JobsDeps } from "./deps.ts";
import { requestJobTransition } from "./detail.ts";
import { JobIdParamsSchema, jobDetailAccepted } from "./schema.ts";

export const retryJobRoute = operatorRoute({
  method: "post",
  path: "/jobs/{jobId}/retry",
  tags: ["jobs"],
  summary: "Retry a failed job",
  operationId: "retryJob",
  description:
    "A FAILED job gets a new attempt (next attempt number, new fencing token) and returns to QUEUED; encoding is repeated. Any other state answers 409.",
  request: { params: JobIdParamsSchema },
  responses: jobDetailAccepted("The job, queued again"),
  errors: ["job.not_found", "job.not_retryable"],
});

export const retryJob =
  (deps: JobsDeps): AppRouteHandler<typeof retryJobRoute> =>
  async (c) => {
    const { jobId } = c.req.valid("param");
    const detail = await requestJobTransition(deps, jobId, "retry");
    deps.logger.info("job retry requested", {
      requestId: c.get("requestId"),
      jobId,
      operator: c.get("operator").subject,
    });
    return c.json(detail, 202);
  };
