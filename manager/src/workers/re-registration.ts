import { examples, WorkerReRegistrationRequestSchema } from "@tjm/protocol";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { apiRoute, BODY_ERRORS, jsonBody, jsonResponse, protocolComponent } from "../platform/routes.ts";
import { ensureWorkerConsumer } from "./consumer.ts";
import type { WorkersDeps } from "./deps.ts";
import { PROOF_ERRORS, proveWorker } from "./proof.ts";
import {
  describeWorker,
  RegistrationResponseSchema,
  registrationAnswer,
  requireBroker,
} from "./registration.ts";
import { announceWorkerChange, startWorkerInstance } from "./store.ts";

export const reRegisterWorkerRoute = apiRoute({
  method: "post",
  path: "/re-registrations",
  tags: ["worker"],
  summary: "Start a new instance of a registered Worker",
  operationId: "reRegisterWorker",
  security: [],
  description:
    "A restarted Worker answers a `re-registration` challenge with a signature by its NKey and describes itself again (ffmpeg or hardware may have changed). It keeps its workerId and gets a new instanceId and fresh NATS credentials; heartbeats of the old instance are ignored from now on. Of the attempts it offers to finish from disk (`resumableAttempts`), the answer names those it goes on with (`resumedAttemptIds`); the old instance's other attempts are failed as the Worker's restart says.",
  request: jsonBody(
    protocolComponent(
      "WorkerReRegistrationRequest",
      WorkerReRegistrationRequestSchema,
      examples.workerReRegistrationRequest,
    ),
  ),
  responses: {
    200: jsonResponse(
      "The Worker's identity with its new instance, and NATS credentials",
      RegistrationResponseSchema,
    ),
  },
  errors: [...PROOF_ERRORS, "worker.pool_mismatch", ...BODY_ERRORS, "dependency.unavailable"],
});

export const reRegisterWorker =
  (deps: WorkersDeps): AppRouteHandler<typeof reRegisterWorkerRoute> =>
  async (c) => {
    const request = c.req.valid("json");
    const nc = requireBroker(deps);
    const { row, resumedAttemptIds } = await deps.sql.begin(async (tx) => {
      const known = await proveWorker(tx, { ...request, purpose: "re-registration" });
      if (known.pool !== request.pool) {
        throw new ApiError(
          "worker.pool_mismatch",
          `Worker ${known.id} is registered in the ${known.pool} pool, not ${request.pool}; enroll it anew with a token to change pools`,
        );
      }
      const { row: started, previousConnectivity } = await startWorkerInstance(
        tx,
        known.id,
        crypto.randomUUID(),
        describeWorker(request),
      );
      await announceWorkerChange(tx, started, "instance", {
        previousInstanceId: known.instanceId,
        from: previousConnectivity,
        to: started.connectivity,
      });
      const kept = await deps.hooks.instanceStarted(
        tx,
        { workerId: started.id, instanceId: started.instanceId },
        request.resumableAttempts,
      );
      // Recreated if NATS lost it (a server restarted without its store).
      await ensureWorkerConsumer(nc, deps.subjectPrefix, started.id, deps.broker.streamReplicas);
      return { row: started, resumedAttemptIds: kept };
    });
    deps.monitor.instanceStarted(row);
    deps.logger.info("worker re-registered", { workerId: row.id, instanceId: row.instanceId });
    return c.json({ ...(await registrationAnswer(deps, row)), resumedAttemptIds }, 200);
  };
