import { z } from "@hono/zod-openapi";
import { PROTOCOL_VERSION } from "@tjm/protocol";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import { validationError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { JobsDeps } from "./deps.ts";
import { jobExample, submitJobExample } from "./examples.ts";
import { deriveWorkerPool, limits } from "./plan.ts";
import { ExecutionPlanTemplateSchema, JobSchema } from "./schema.ts";
import { insertJob } from "./store.ts";
import { toJob } from "./view.ts";

export const SubmitJobBodySchema = z
  .object({
    projectId: z.uuid().openapi({ example: "2c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f" }),
    priority: z
      .number()
      .int()
      .min(-1000)
      .max(1000)
      .default(0)
      .openapi({ description: "-1000..1000, higher is scheduled first", example: 0 }),
    requirements: z
      .object({
        requiredCapabilities: z
          .array(
            z
              .string()
              .regex(/^[A-Za-z0-9_.:-]{1,64}$/, "must be a capability name such as libx264 or h264_nvenc"),
          )
          .max(limits.requiredCapabilities)
          .default([])
          .transform((names) => [...new Set(names)])
          .openapi({
            description:
              "Encoder, decoder, filter or hardware names the Worker must have. They also choose the pool: names with nvenc/cuda/cuvid/nvdec/npp -> nvidia, qsv -> intel, amf -> amd, otherwise cpu.",
            example: ["libx264"],
          }),
      })
      .default({ requiredCapabilities: [] }),
    executionPlan: ExecutionPlanTemplateSchema,
  })
  .superRefine(
    (body, ctx) => {
      const names = (body as { requirements?: { requiredCapabilities?: unknown } } | null)?.requirements
        ?.requiredCapabilities;
      if (!Array.isArray(names) || !names.every((name) => typeof name === "string")) return;
      const derived = deriveWorkerPool(names);
      if (!derived.ok)
        ctx.addIssue({
          code: "custom",
          path: ["requirements", "requiredCapabilities"],
          message: derived.problem,
        });
    },
    { when: () => true },
  )
  .openapi("SubmitJob");

export const submitJobRoute = operatorRoute({
  method: "post",
  path: "/jobs",
  tags: ["jobs"],
  summary: "Submit a job",
  operationId: "submitJob",
  description:
    "Validates the execution plan, stores the job (QUEUED) with attempt 1 (CREATED, progress 0), a fencing token and the protocol version, all in one transaction. The answer shows the job as inserted (attempt CREATED), also when a Worker has a free slot and the same transaction already leased it to that Worker. There is no idempotency key: the same body twice makes two jobs.",
  request: jsonBody(SubmitJobBodySchema, submitJobExample),
  responses: { 201: jsonResponse("The job, queued", JobSchema, jobExample) },
  errors: BODY_ERRORS,
});

export const submitJob =
  (deps: JobsDeps): AppRouteHandler<typeof submitJobRoute> =>
  async (c) => {
    const body = c.req.valid("json");
    const derived = deriveWorkerPool(body.requirements.requiredCapabilities);
    if (!derived.ok)
      throw validationError([
        {
          path: "requirements.requiredCapabilities",
          message: derived.problem,
          code: "job.requirements_unsatisfiable",
        },
      ]);
    const job = {
      id: crypto.randomUUID(),
      attemptId: crypto.randomUUID(),
      projectId: body.projectId,
      priority: body.priority,
      workerPool: derived.pool,
      requiredCapabilities: body.requirements.requiredCapabilities,
      executionPlan: body.executionPlan,
      protocolVersion: PROTOCOL_VERSION,
      deadlineHours: deps.jobDeadlineHours,
    };
    const {
      inserted: [row],
      scheduled,
    } = await deps.storeJob((sql) => insertJob(sql, job));
    // The pass that leased it ran after the insert: no wake-up for another.
    if (scheduled) c.set("scheduled", true);
    if (!row)
      throw validationError([
        {
          path: "projectId",
          message: `project ${body.projectId} does not exist`,
          code: "job.project_unknown",
        },
      ]);
    deps.logger.info("job submitted", {
      requestId: c.get("requestId"),
      jobId: row.id,
      attemptId: row.currentAttemptId,
      projectId: body.projectId,
      workerPool: derived.pool,
      priority: body.priority,
    });
    return c.json(toJob(row, deps.liveProgress), 201);
  };
