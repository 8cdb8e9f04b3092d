import {
  examples,
  PROTOCOL_VERSION,
  WorkerCredentialsRequestSchema,
  WorkerCredentialsSchema,
} from "@tjm/protocol";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { apiRoute, BODY_ERRORS, jsonBody, jsonResponse, protocolComponent } from "../platform/routes.ts";
import type { WorkersDeps } from "./deps.ts";
import { PROOF_ERRORS, proveWorker } from "./proof.ts";

export const refreshCredentialsRoute = apiRoute({
  method: "post",
  path: "/credentials",
  tags: ["worker"],
  summary: "Refresh a running Worker's NATS credentials",
  operationId: "refreshWorkerCredentials",
  security: [],
  description:
    "The running instance answers a `credentials` challenge before its user JWT expires and gets a new one. Refused for a disabled Worker and for an instance that is no longer current.",
  request: jsonBody(
    protocolComponent(
      "WorkerCredentialsRequest",
      WorkerCredentialsRequestSchema,
      examples.workerCredentialsRequest,
    ),
  ),
  responses: {
    200: jsonResponse(
      "Fresh credentials",
      protocolComponent("WorkerCredentials", WorkerCredentialsSchema, examples.workerCredentials),
    ),
  },
  errors: [...PROOF_ERRORS, "worker.instance_superseded", ...BODY_ERRORS],
});

export const refreshCredentials =
  (deps: WorkersDeps): AppRouteHandler<typeof refreshCredentialsRoute> =>
  async (c) => {
    const request = c.req.valid("json");
    const worker = await deps.sql.begin(async (tx) => {
      const proven = await proveWorker(tx, { ...request, purpose: "credentials" });
      if (proven.instanceId !== request.instanceId) {
        throw new ApiError(
          "worker.instance_superseded",
          `Instance ${request.instanceId} of Worker ${proven.id} is no longer current; re-register to start a new instance`,
        );
      }
      return proven;
    });
    const credentials = await deps.credentials?.({ workerId: worker.id, publicKey: worker.publicKey });
    return c.json(
      {
        protocolVersion: PROTOCOL_VERSION,
        userJwt: credentials?.userJwt ?? null,
        userJwtExpiresAt: credentials?.expiresAt.toISOString() ?? null,
      },
      200,
    );
  };
