import { createRoute, z } from "@hono/zod-openapi";
import {
  examples,
  PROTOCOL_VERSION,
  WorkerCredentialsRequestSchema,
  WorkerCredentialsSchema,
} from "@tjm/protocol";
import { ApiError, errorResponses } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { WorkersDeps } from "./deps.ts";
import { proveWorker } from "./proof.ts";

export const CredentialsRequestSchema = z
  .object(WorkerCredentialsRequestSchema.shape)
  .openapi("WorkerCredentialsRequest", {
    example: examples.workerCredentialsRequest,
  });
export const CredentialsSchema = z.object(WorkerCredentialsSchema.shape).openapi("WorkerCredentials", {
  example: examples.workerCredentials,
});

export const refreshCredentialsRoute = createRoute({
  method: "post",
  path: "/credentials",
  tags: ["worker"],
  summary: "Refresh a running Worker's NATS credentials",
  description:
    "The running instance answers a `credentials` challenge before its user JWT expires and gets a new one. Refused for a disabled Worker and for an instance that is no longer current.",
  request: {
    body: { required: true, content: { "application/json": { schema: CredentialsRequestSchema } } },
  },
  responses: {
    200: { description: "Fresh credentials", content: { "application/json": { schema: CredentialsSchema } } },
    ...errorResponses(
      "BAD_REQUEST",
      "UNAUTHORIZED",
      "FORBIDDEN",
      "NOT_FOUND",
      "CONFLICT",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
      "INTERNAL",
    ),
  },
});

export const refreshCredentials =
  (deps: WorkersDeps): AppRouteHandler<typeof refreshCredentialsRoute> =>
  async (c) => {
    const request = c.req.valid("json");
    const worker = await deps.sql.begin(async (tx) => {
      const proven = await proveWorker(tx, { ...request, purpose: "credentials" });
      if (proven.instanceId !== request.instanceId) {
        throw new ApiError(
          "CONFLICT",
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
