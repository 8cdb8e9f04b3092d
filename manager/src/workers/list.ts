import { z } from "@hono/zod-openapi";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import { WorkerPoolSchema } from "../jobs/schema.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { booleanParam, pageQuery } from "../platform/query.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { WorkersDeps } from "./deps.ts";
import { CertificationStatusSchema, ConnectivitySchema, WorkerListSchema } from "./schema.ts";
import { listWorkers } from "./store.ts";
import { showWorker } from "./view.ts";

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

export const listWorkersRoute = operatorRoute({
  method: "get",
  path: "/workers",
  tags: ["workers"],
  summary: "List Workers",
  operationId: "listWorkers",
  description: "Newest registration first, with the total matching the filters.",
  request: { query: ListWorkersQuerySchema },
  responses: { 200: jsonResponse("A page of Workers", WorkerListSchema) },
  errors: [],
});

export const listWorkersHandler =
  (deps: WorkersDeps): AppRouteHandler<typeof listWorkersRoute> =>
  async (c) => {
    const query = c.req.valid("query");
    const { rows, total } = await listWorkers(deps.sql, query, query.limit, query.offset);
    return c.json(
      {
        items: rows.map((row) => showWorker(deps, row)),
        total,
        limit: query.limit,
        offset: query.offset,
      },
      200,
    );
  };
