import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import { deleteWorkerConsumer } from "./consumer.ts";
import type { WorkersDeps } from "./deps.ts";
import { unknownWorker } from "./proof.ts";
import { requireBroker } from "./registration.ts";
import { WorkerIdParamSchema, WorkerSchema } from "./schema.ts";
import { announceWorkerChange, disableWorker } from "./store.ts";
import { showWorker } from "./view.ts";

export const disableWorkerRoute = operatorRoute({
  method: "post",
  path: "/workers/{workerId}/disable",
  tags: ["workers"],
  summary: "Disable (revoke) a Worker",
  operationId: "disableWorker",
  description:
    "For a lost or compromised host. Every attempt it holds fails with WORKER_DISABLED and its job moves to the next attempt. The Worker's durable consumer is deleted, so it receives no further commands; it can no longer re-register or refresh its NATS credentials, so its current user JWT lapses at expiry (WORKER_JWT_TTL_SECONDS). To bring the host back, enroll it again with a new token. Idempotent.",
  request: { params: WorkerIdParamSchema },
  responses: { 202: jsonResponse("The Worker, now DISABLED", WorkerSchema) },
  errors: ["worker.not_found", "dependency.unavailable"],
});

export const disableWorkerHandler =
  (deps: WorkersDeps): AppRouteHandler<typeof disableWorkerRoute> =>
  async (c) => {
    const { workerId } = c.req.valid("param");
    const operator = c.get("operator").subject;
    const nc = requireBroker(deps);
    const row = await deps.sql.begin(async (tx) => {
      const disabled = await disableWorker(tx, workerId, operator);
      if (!disabled) throw unknownWorker(workerId);
      if (disabled.changed) {
        await announceWorkerChange(tx, disabled.row, "disable", {
          disabledAt: disabled.row.disabledAt?.toISOString(),
        });
        await deps.hooks.disabled(tx, workerId);
      }
      // Inside the transaction: if the consumer cannot be deleted, the Worker is not reported disabled.
      await deleteWorkerConsumer(nc, deps.subjectPrefix, workerId);
      return disabled.row;
    });
    deps.logger.warn("worker disabled", { workerId, operator });
    return c.json(showWorker(deps, row), 202);
  };
