import { createRoute } from "@hono/zod-openapi";
import { conflict, errorResponses, notFound } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import type { JobsDeps } from "./deps.ts";
import { decideRetry } from "./lifecycle.ts";
import { JobDetailSchema, JobIdParamsSchema } from "./schema.ts";
import { findJobDetail, lockJob, retryFailedJob } from "./store.ts";
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
      const decision = decideRetry(job.state);
      if (decision.kind === "refuse") throw conflict(decision.reason);
      await retryFailedJob(tx, jobId, crypto.randomUUID());
      return findJobDetail(tx, jobId);
    });
    if (!found) throw notFound(`Job ${jobId} does not exist`);
    return c.json(toJobDetail(found.job, found.attempts, deps.liveProgress), 202);
  };
