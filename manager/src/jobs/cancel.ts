import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { JobsDeps } from "./deps.ts";
import { requestJobTransition } from "./detail.ts";
import { JobIdParamsSchema, jobDetailAccepted } from "./schema.ts";

export const cancelJobRoute = operatorRoute({
  method: "post",
  path: "/jobs/{jobId}/cancel",
  tags: ["jobs"],
  summary: "Cancel a job",
  operationId: "cancelJob",
  description:
    "A QUEUED job becomes CANCELLED at once. A job held by a Worker becomes CANCEL_REQUESTED; CANCELLED follows when the Worker confirms. Cancelling a CANCEL_REQUESTED or CANCELLED job changes nothing and answers 202. COMPLETED and FAILED jobs answer 409.",
  request: { params: JobIdParamsSchema },
  responses: jobDetailAccepted("Cancellation done or requested"),
  errors: ["job.not_found", "job.not_cancellable"],
});

export const cancelJob =
  (deps: JobsDeps): AppRouteHandler<typeof cancelJobRoute> =>
  async (c) => {
    const { jobId } = c.req.valid("param");
    const detail = await requestJobTransition(deps, jobId, "cancel-requested");
    deps.logger.info("job cancel requested", {
      requestId: c.get("requestId"),
      jobId,
      operator: c.get("operator").subject,
    });
    return c.json(detail, 202);
  };
