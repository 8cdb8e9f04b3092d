import { createRoute } from "@hono/zod-openapi";
import { conflict, errorResponses, notFound } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import type { JobsDeps } from "./deps.ts";
import { assertNever, decideCancel } from "./lifecycle.ts";
import { JobDetailSchema, JobIdParamsSchema } from "./schema.ts";
import { cancelQueuedJob, findJobDetail, lockJob, requestJobCancellation } from "./store.ts";
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
      const decision = decideCancel(job.state);
      switch (decision.kind) {
        case "cancel-now":
          await cancelQueuedJob(tx, jobId, job.currentAttemptId);
          // A lease may be on its way to a Worker that has not accepted it yet: it drops it.
          await deps.cancelHeldAttempt(tx, job.currentAttemptId);
          break;
        case "held-by-worker":
          await requestJobCancellation(tx, jobId, job.currentAttemptId, job.state);
          await deps.cancelHeldAttempt(tx, job.currentAttemptId);
          break;
        case "already-cancelling":
          break;
        case "refuse":
          throw conflict(decision.reason);
        default:
          assertNever(decision);
      }
      return findJobDetail(tx, jobId);
    });
    if (!found) throw notFound(`Job ${jobId} does not exist`);
    return c.json(toJobDetail(found.job, found.attempts, deps.liveProgress), 202);
  };
