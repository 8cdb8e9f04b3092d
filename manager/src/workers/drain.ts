import { PROTOCOL_VERSION } from "@tjm/protocol";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import { sendCommand } from "../outbox/index.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { WorkersDeps } from "./deps.ts";
import { unknownWorker } from "./proof.ts";
import { WorkerIdParamSchema, WorkerSchema } from "./schema.ts";
import { announceWorkerChange, findWorker, requestDrain } from "./store.ts";
import { showWorker } from "./view.ts";

export const drainWorkerRoute = operatorRoute({
  method: "post",
  path: "/workers/{workerId}/drain",
  tags: ["workers"],
  summary: "Drain a Worker",
  operationId: "drainWorker",
  description:
    "The Worker takes no new leases from now on and finishes what it holds. Idempotent: draining a draining Worker changes nothing and answers the same.",
  request: { params: WorkerIdParamSchema },
  responses: { 202: jsonResponse("Drain requested; the Worker is told through its commands", WorkerSchema) },
  errors: ["worker.not_found"],
});

export const drainWorkerHandler =
  (deps: WorkersDeps): AppRouteHandler<typeof drainWorkerRoute> =>
  async (c) => {
    const { workerId } = c.req.valid("param");
    const row = await deps.sql.begin(async (tx) => {
      const drained = await requestDrain(tx, workerId);
      if (!drained) throw unknownWorker(workerId);
      if (drained.changed) {
        await sendCommand(tx, workerId, { type: "drain", protocolVersion: PROTOCOL_VERSION });
        await announceWorkerChange(tx, drained.row, "drain", {
          drainRequestedAt: drained.row.drainRequestedAt?.toISOString(),
        });
        await deps.hooks.drainRequested(tx, workerId);
        deps.logger.info("worker drain requested", { workerId, operator: c.get("operator").subject });
      }
      return (await findWorker(tx, workerId)) ?? drained.row;
    });
    return c.json(showWorker(deps, row), 202);
  };
