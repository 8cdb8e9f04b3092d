import { z } from "@hono/zod-openapi";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { pageQuery } from "../platform/query.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { JobsDeps } from "./deps.ts";
import { JobListSchema, JobStateSchema, WorkerPoolSchema } from "./schema.ts";
import { countJobs, listJobs } from "./store.ts";
import { toJob } from "./view.ts";

export const ListJobsQuerySchema = z
  .object({
    state: JobStateSchema.optional().openapi({
      param: { name: "state", in: "query" },
      description: "One state; not with states",
    }),
    states: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .transform((value) =>
        value === undefined
          ? undefined
          : (Array.isArray(value) ? value : [value])
              .flatMap((part) => part.split(","))
              .map((part) => part.trim()),
      )
      .pipe(z.array(JobStateSchema).min(1, "must name at least one state").optional())
      // A state named twice must not list its jobs twice.
      .transform((states) => states && [...new Set(states)])
      .openapi({
        param: { name: "states", in: "query", style: "form", explode: true },
        description: "Several states, comma-separated (states=QUEUED,RUNNING) or repeated; not with state",
        type: "array",
        items: { $ref: "#/components/schemas/JobState" },
        example: ["QUEUED", "RUNNING"],
      }),
    workerPool: WorkerPoolSchema.optional().openapi({ param: { name: "workerPool", in: "query" } }),
    ...pageQuery,
  })
  .superRefine(
    (query, ctx) => {
      if (query.state !== undefined && query.states !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["states"],
          message: "state and states cannot be used together",
        });
      }
    },
    { when: (payload) => payload.value !== null && typeof payload.value === "object" },
  );

export const listJobsRoute = operatorRoute({
  method: "get",
  path: "/jobs",
  tags: ["jobs"],
  summary: "List jobs",
  operationId: "listJobs",
  description: "Newest first, with the total matching the filters.",
  request: { query: ListJobsQuerySchema },
  responses: { 200: jsonResponse("A page of jobs", JobListSchema) },
  errors: [],
});

export const listJobsHandler =
  (deps: JobsDeps): AppRouteHandler<typeof listJobsRoute> =>
  async (c) => {
    const query = c.req.valid("query");
    const filter = {
      states: query.states ?? (query.state ? [query.state] : undefined),
      workerPool: query.workerPool,
    };
    const [rows, total] = await Promise.all([
      listJobs(deps.sql, filter, query.limit, query.offset),
      countJobs(deps.sql, filter),
    ]);
    return c.json(
      {
        items: rows.map((row) => toJob(row, deps.liveProgress)),
        total,
        limit: query.limit,
        offset: query.offset,
      },
      200,
    );
  };
