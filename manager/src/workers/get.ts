import { createRoute } from "@hono/zod-openapi";
import { errorResponses } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import type { WorkersDeps } from "./deps.ts";
import { unknownWorker } from "./proof.ts";
import { WorkerIdParamSchema, WorkerSchema } from "./schema.ts";
import { findWorker } from "./store.ts";
import { toWorker } from "./view.ts";

export const getWorkerRoute = createRoute({
  method: "get",
  path: "/workers/{workerId}",
  tags: ["workers"],
  summary: "Get one Worker",
  security: operatorSecurity,
  request: { params: WorkerIdParamSchema },
  responses: {
    200: { description: "The Worker", content: { "application/json": { schema: WorkerSchema } } },
    ...errorResponses("BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "INTERNAL"),
  },
});

export const getWorkerHandler =
  (deps: WorkersDeps): AppRouteHandler<typeof getWorkerRoute> =>
  async (c) => {
    const { workerId } = c.req.valid("param");
    const row = await findWorker(deps.sql, workerId);
    if (!row) throw unknownWorker(workerId);
    return c.json(toWorker(row, deps.monitor.live(row.id), deps.statistics(row.id)), 200);
  };
