import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { JobsDeps } from "./deps.ts";
import { jobDetail } from "./detail.ts";
import { JobDetailSchema, JobIdParamsSchema } from "./schema.ts";

export const getJobRoute = operatorRoute({
  method: "get",
  path: "/jobs/{jobId}",
  tags: ["jobs"],
  summary: "Get a job",
  operationId: "getJob",
  description:
    "The job with its stored execution plan, every attempt, and the current attempt's live progress.",
  request: { params: JobIdParamsSchema },
  responses: { 200: jsonResponse("The job", JobDetailSchema) },
  errors: ["job.not_found"],
});

export const getJob =
  (deps: JobsDeps): AppRouteHandler<typeof getJobRoute> =>
  async (c) => {
    const { jobId } = c.req.valid("param");
    // The job and its attempts are two reads: one snapshot keeps a transition committed between
    // them from showing a RUNNING job beside its next attempt.
    const detail = await deps.sql.begin("isolation level repeatable read read only", (tx) =>
      jobDetail(tx, jobId, deps.liveProgress),
    );
    return c.json(detail, 200);
  };
