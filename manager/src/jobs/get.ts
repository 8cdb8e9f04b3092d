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
  async (c) =>
    c.json(await jobDetail(deps.sql, c.req.valid("param").jobId, deps.liveProgress), 200);
