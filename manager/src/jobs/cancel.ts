import { createRoute } from "@hono/zod-openapi";
import { resolve } from "../lifecycle/index.ts";
import { conflict, errorResponses, notFound } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import type { JobsDeps } from "./deps.ts";
import { JobDetailSchema, JobIdParamsSchema } from "./schema.ts";
import { applyJobTransition, findJobDetail, lockJob } from "./store.ts";
import { toJobDetail } from "./view.ts";

export const cancelJobRoute = createRoute({
  method: "post",
  path: "/jobs/{jobId}/cancel",
  tags: ["jobs"],
  summary: "Cancel a job",
  description:
    "A QUEUED job becomes CANCELLED at once. A job held by a Worker becomes CANCEL_REQUESTED; CANCELLED follows when the Worker confirms. Cancelling a CANCEL_REQUESTED or CANCELLED job changes nothing and answers 202. COMPLETED and FAILED jobs answer 409.",
  security: operatorSecurity,
  request: { params: JobIdParamsSchema },
  responses: {
    202: {
      description: "Cancellation done or requested",
      content: { "application/json": { schema: JobDetailSchema } },
    },
    ...errorResponses("BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "INTERNAL"),
  },
});

export const cancelJob =
  (deps: JobsDeps): AppRouteHandler<typeof cancelJobRoute> =>
  async (c) => {
    const { jobId } = c.req.valid("param");
    const found = await deps.sql.begin(async (tx) => {
      const job = await lockJob(tx, jobId);
      if (!job) throw notFound(`Job ${jobId} does not exist`);
      const resolution = resolve("cancel-requested", { job: job.state, attempt: job.currentAttemptState });
      if (resolution.kind === "refused") throw conflict(resolution.reason);
      await applyJobTransition(tx, job, resolution.transition);
      if (resolution.transition.effects.command === "cancel")
        await deps.cancelHeldAttempt(tx, job.currentAttemptId);
      return findJobDetail(tx, jobId);
    });
    if (!found) throw notFound(`Job ${jobId} does not exist`);
    return c.json(toJobDetail(found.job, found.attempts, deps.liveProgress), 202);
  };
