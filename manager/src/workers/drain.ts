import { createRoute } from "@hono/zod-openapi";
import { PROTOCOL_VERSION } from "@tjm/protocol";
import { errorResponses } from "../platform/errors.ts";
import { type AppRouteHandler, operatorSecurity } from "../platform/http.ts";
import { enqueueOutbox, sendCommand } from "../platform/outbox.ts";
import type { WorkersDeps } from "./deps.ts";
import { unknownWorker } from "./proof.ts";
import { WorkerIdParamSchema, WorkerSchema } from "./schema.ts";
import { findWorker, requestDrain } from "./store.ts";
import { toWorker } from "./view.ts";

export const drainWorkerRoute = createRoute({
  method: "post",
  path: "/workers/{workerId}/drain",
  tags: ["workers"],
  summary: "Drain a Worker",
  description:
    "The Worker takes no new leases from now on and finishes what it holds. Idempotent: draining a draining Worker changes nothing and answers the same.",
  security: operatorSecurity,
  request: { params: WorkerIdParamSchema },
  responses: {
    202: {
      description: "Drain requested; the Worker is told through its commands",
      content: { "application/json": { schema: WorkerSchema } },
    },
    ...errorResponses("BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "INTERNAL"),
  },
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
        await enqueueOutbox(tx, "worker.updated", {
          workerId,
          instanceId: drained.row.instanceId,
          change: "drain",
          drainRequestedAt: drained.row.drainRequestedAt?.toISOString(),
        });
        await deps.hooks.drainRequested(tx, workerId);
        deps.logger.info("worker drain requested", { workerId, operator: c.get("operator").subject });
      }
      return (await findWorker(tx, workerId)) ?? drained.row;
    });
    return c.json(toWorker(row, deps.monitor.live(row.id), deps.statistics(row.id)), 202);
  };
