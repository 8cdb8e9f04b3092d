import { PROTOCOL_VERSION } from "@tjm/protocol";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import { sendCommand } from "../outbox/index.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { WorkersDeps } from "./deps.ts";
import { unknownWorker } from "./proof.ts";
import { WorkerIdParamSchema, WorkerSchema } from "./schema.ts";
import { announceWorkerChange, endDrain } from "./store.ts";
import { showWorker } from "./view.ts";

export const undrainWorkerRoute = operatorRoute({
  method: "post",
  path: "/workers/{workerId}/undrain",
  operationId: "undrainWorker",
  tags: ["workers"],
  summary: "Undrain (resume) a Worker",
  description:
    "Ends a drain: the DRAINING (or DRAINED) Worker takes leases again. A Worker that is not draining, or is disabled, answers 409.",
  request: { params: WorkerIdParamSchema },
  responses: { 202: jsonResponse("Drain ended; the Worker is told through its commands", WorkerSchema) },
  errors: ["worker.not_found", "worker.not_draining"],
});

export const undrainWorkerHandler =
  (deps: WorkersDeps): AppRouteHandler<typeof undrainWorkerRoute> =>
  async (c) => {
    const { workerId } = c.req.valid("param");
    const row = await deps.sql.begin(async (tx) => {
      const ended = await endDrain(tx, workerId);
      if (ended.kind === "unknown") throw unknownWorker(workerId);
      if (ended.kind === "disabled")
        throw new ApiError("worker.not_draining", `Worker ${workerId} is disabled and cannot be undrained`);
      if (ended.kind !== "ended")
        throw new ApiError("worker.not_draining", `Worker ${workerId} is not draining`);
      await sendCommand(tx, workerId, { type: "undrain", protocolVersion: PROTOCOL_VERSION });
      await announceWorkerChange(tx, ended.row, "undrain", {});
      return ended.row;
    });
    deps.logger.info("worker undrained", { workerId, operator: c.get("operator").subject });
    return c.json(showWorker(deps, row), 202);
  };
