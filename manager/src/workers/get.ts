import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { WorkersDeps } from "./deps.ts";
import { unknownWorker } from "./proof.ts";
import { WorkerIdParamSchema, WorkerSchema } from "./schema.ts";
import { findWorker } from "./store.ts";
import { showWorker } from "./view.ts";

export const getWorkerRoute = operatorRoute({
  method: "get",
  path: "/workers/{workerId}",
  tags: ["workers"],
  summary: "Get one Worker",
  operationId: "getWorker",
  request: { params: WorkerIdParamSchema },
  responses: { 200: jsonResponse("The Worker", WorkerSchema) },
  errors: ["worker.not_found"],
});

export const getWorkerHandler =
  (deps: WorkersDeps): AppRouteHandler<typeof getWorkerRoute> =>
  async (c) => {
    const { workerId } = c.req.valid("param");
    const row = await findWorker(deps.sql, workerId);
    if (!row) throw unknownWorker(workerId);
    return c.json(showWorker(deps, row), 200);
  };
