import { createRoute, z } from "@hono/zod-openapi";
import { WorkerPoolSchema } from "../jobs/schema.ts";
import { errorResponses } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import { booleanParam, pageQuery } from "../platform/query.ts";
import type { WorkersDeps } from "./deps.ts";
import { CertificationStatusSchema, ConnectivitySchema, WorkerListSchema } from "./schema.ts";
import { listWorkers } from "./store.ts";
import { toWorker } from "./view.ts";

export const ListWorkersQuerySchema = z.object({
  connectivity: ConnectivitySchema.optional().openapi({ param: { name: "connectivity", in: "query" } }),
  pool: WorkerPoolSchema.optional().openapi({ param: { name: "pool", in: "query" } }),
  certification: CertificationStatusSchema.optional().openapi({
    param: { name: "certification", in: "query" },
  }),
  draining: booleanParam().openapi({
    param: { name: "draining", in: "query" },
    description: "true: only draining Workers; false: only those not draining",
    type: "boolean",
  }),
  ...pageQuery,
});

export const listWorkersRoute = createRoute({
  method: "get",
  path: "/workers",
  tags: ["workers"],
  summary: "List Workers",
  description: "Newest registration first, with the total matching the filters.",
  security: operatorSecurity,
  request: { query: ListWorkersQuerySchema },
  responses: {
    200: { description: "A page of Workers", content: { "application/json": { schema: WorkerListSchema } } },
    ...errorResponses("BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "INTERNAL"),
  },
});

export const listWorkersHandler =
  (deps: WorkersDeps): AppRouteHandler<typeof listWorkersRoute> =>
  async (c) => {
    const query = c.req.valid("query");
    const { rows, total } = await listWorkers(deps.sql, query, query.limit, query.offset);
    return c.json(
      {
        items: rows.map((row) => toWorker(row, deps.monitor.live(row.id), deps.statistics(row.id))),
        total,
        limit: query.limit,
        offset: query.offset,
      },
      200,
    );
  };
