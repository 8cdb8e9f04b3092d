import { createRoute } from "@hono/zod-openapi";
import { errorResponses } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import { enqueueOutbox } from "../platform/outbox.ts";
import { deleteWorkerConsumer } from "./consumer.ts";
import type { WorkersDeps } from "./deps.ts";
import { unknownWorker } from "./proof.ts";
import { requireBroker } from "./registration.ts";
import { WorkerIdParamSchema, WorkerSchema } from "./schema.ts";
import { disableWorker } from "./store.ts";
import { toWorker } from "./view.ts";

export const disableWorkerRoute = createRoute({
  method: "post",
  path: "/workers/{workerId}/disable",
  tags: ["workers"],
  summary: "Disable (revoke) a Worker",
  description:
    "For a lost or compromised host. Every attempt it holds fails with WORKER_DISABLED and its job moves to the next attempt. The Worker's durable consumer is deleted, so it receives no further commands; it can no longer re-register or refresh its NATS credentials, so its current user JWT lapses at expiry (WORKER_JWT_TTL_SECONDS). To bring the host back, enroll it again with a new token. Idempotent.",
  security: operatorSecurity,
  request: { params: WorkerIdParamSchema },
  responses: {
    202: {
      description: "The Worker, now DISABLED",
      content: { "application/json": { schema: WorkerSchema } },
    },
    ...errorResponses(
      "BAD_REQUEST",
      "UNAUTHORIZED",
      "FORBIDDEN",
      "NOT_FOUND",
      "INTERNAL",
      "SERVICE_UNAVAILABLE",
    ),
  },
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
        await enqueueOutbox(tx, "worker.updated", {
          workerId,
          instanceId: disabled.row.instanceId,
          change: "disable",
          disabledAt: disabled.row.disabledAt?.toISOString(),
        });
        await deps.hooks.disabled(tx, workerId);
      }
      // Inside the transaction: if the consumer cannot be deleted, the Worker is not reported disabled.
      await deleteWorkerConsumer(nc, deps.subjectPrefix, workerId);
      return disabled.row;
    });
    deps.logger.warn("worker disabled", { workerId, operator });
    return c.json(toWorker(row, deps.monitor.live(row.id), deps.statistics(row.id)), 202);
  };
