import { createRoute } from "@hono/zod-openapi";
import { errorResponses, notFound } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import type { JobsDeps } from "./deps.ts";
import { JobDetailSchema, JobIdParamsSchema } from "./schema.ts";
import { findJobDetail } from "./store.ts";
import { toJobDetail } from "./view.ts";

export const getJobRoute = createRoute({
  method: "get",
  path: "/jobs/{jobId}",
  tags: ["jobs"],
  summary: "Get a job",
  description:
    "The job with its stored execution plan, every attempt, and the current attempt's live progress.",
  security: operatorSecurity,
  request: { params: JobIdParamsSchema },
  responses: {
    200: { description: "The job", content: { "application/json": { schema: JobDetailSchema } } },
    ...errorResponses("BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "INTERNAL"),
  },
});

export const getJob =
  (deps: JobsDeps): AppRouteHandler<typeof getJobRoute> =>
  async (c) => {
    const { jobId } = c.req.valid("param");
    const found = await findJobDetail(deps.sql, jobId);
    if (!found) throw notFound(`Job ${jobId} does not exist`);
    return c.json(toJobDetail(found.job, found.attempts, deps.liveProgress), 200);
  };
