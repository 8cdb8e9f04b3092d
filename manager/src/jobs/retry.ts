import { createRoute } from "@hono/zod-openapi";
import { resolve } from "../lifecycle/index.ts";
import { conflict, errorResponses, notFound } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import type { JobsDeps } from "./deps.ts";
import { JobDetailSchema, JobIdParamsSchema } from "./schema.ts";
import { applyJobTransition, findJobDetail, lockJob } from "./store.ts";
import { toJobDetail } from "./view.ts";

export const retryJobRoute = createRoute({
  method: "post",
  path: "/jobs/{jobId}/retry",
  tags: ["jobs"],
  summary: "Retry a failed job",
  description:
    "A FAILED job gets a new attempt (next attempt number, new fencing token) and returns to QUEUED; encoding is repeated. Any other state answers 409.",
  security: operatorSecurity,
  request: { params: JobIdParamsSchema },
  responses: {
    202: {
      description: "The job, queued again",
      content: { "application/json": { schema: JobDetailSchema } },
    },
    ...errorResponses("BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "INTERNAL"),
  },
});

export const retryJob =
  (deps: JobsDeps): AppRouteHandler<typeof retryJobRoute> =>
  async (c) => {
    const { jobId } = c.req.valid("param");
    const found = await deps.sql.begin(async (tx) => {
      const job = await lockJob(tx, jobId);
      if (!job) throw notFound(`Job ${jobId} does not exist`);
      const resolution = resolve("retry", { job: job.state, attempt: job.currentAttemptState });
      if (resolution.kind === "refused") throw conflict(resolution.reason);
      await applyJobTransition(tx, job, resolution.transition);
      return findJobDetail(tx, jobId);
    });
    if (!found) throw notFound(`Job ${jobId} does not exist`);
    return c.json(toJobDetail(found.job, found.attempts, deps.liveProgress), 202);
  };
