import { fromPublic } from "@nats-io/nkeys";
import {
  examples,
  PROTOCOL_VERSION,
  type WorkerRegistrationRequest,
  WorkerRegistrationRequestSchema,
  type WorkerRegistrationResponse,
  WorkerRegistrationResponseSchema,
} from "@tjm/protocol";
import { consumeEnrollmentToken } from "../enrollment/index.ts";
import { enqueueOutbox } from "../outbox/index.ts";
import { isPgError, pgErrorCode } from "../platform/db.ts";
import { ApiError, validationError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { apiRoute, BODY_ERRORS, jsonBody, jsonResponse, protocolComponent } from "../platform/routes.ts";
import { ensureWorkerConsumer } from "./consumer.ts";
import type { WorkersDeps } from "./deps.ts";
import { insertWorker, type WorkerDescription, type WorkerRow } from "./store.ts";

export const RegistrationResponseSchema = protocolComponent(
  "WorkerRegistration",
  WorkerRegistrationResponseSchema,
  examples.workerRegistrationResponse,
);

export const registerWorkerRoute = apiRoute({
  method: "post",
  path: "/registrations",
  tags: ["worker"],
  summary: "Register a new Worker with an enrollment token",
  operationId: "registerWorker",
  security: [],
  description:
    "Called by the Worker agent at its first start. The Worker generates its NKey pair and sends only the public key; the answer carries its identity, the NATS URL and a user JWT for that key, limited to the Worker's own subjects. The token is used up only when registration succeeds. A restarted Worker re-registers with a challenge instead.",
  request: jsonBody(
    protocolComponent(
      "WorkerRegistrationRequest",
      WorkerRegistrationRequestSchema,
      examples.workerRegistrationRequest,
    ),
  ),
  responses: { 201: jsonResponse("The Worker's identity and NATS credentials", RegistrationResponseSchema) },
  errors: [
    "enrollment.token_invalid",
    "enrollment.pool_mismatch",
    "worker.already_registered",
    ...BODY_ERRORS,
    "dependency.unavailable",
  ],
});

export function describeWorker(
  request: Omit<WorkerRegistrationRequest, "enrollmentToken" | "publicKey">,
): WorkerDescription {
  return {
    name: request.name,
    pool: request.pool,
    protocolVersion: request.protocolVersion,
    hostCapacity: request.probe.capacity,
    capacityCap: request.capacityCap,
    certification: request.probe.certification,
    capabilities: request.probe.capabilities,
    hardwareEncoders: request.probe.hardwareEncoders,
    ffmpegVersion: request.probe.ffmpegVersion,
  };
}

function isUserPublicKey(publicKey: string): boolean {
  try {
    fromPublic(publicKey);
    return true;
  } catch {
    return false;
  }
}

/** The connection to create the Worker's consumer on; 503 while NATS is down, so nothing is stored. */
export function requireBroker(deps: WorkersDeps) {
  const nc = deps.broker.connection();
  if (!nc)
    throw new ApiError("dependency.unavailable", "The message broker is unavailable; try again shortly");
  return nc;
}

/** The answer to a (re-)registration: identity, where NATS is, and fresh credentials. */
export async function registrationAnswer(
  deps: WorkersDeps,
  row: WorkerRow,
): Promise<WorkerRegistrationResponse> {
  const credentials = await deps.credentials?.({ workerId: row.id, publicKey: row.publicKey });
  return {
    protocolVersion: PROTOCOL_VERSION,
    workerId: row.id,
    instanceId: row.instanceId,
    natsUrl: deps.natsUrl,
    subjectPrefix: deps.subjectPrefix,
    userJwt: credentials?.userJwt ?? null,
    userJwtExpiresAt: credentials?.expiresAt.toISOString() ?? null,
    heartbeatIntervalMs: deps.heartbeatIntervalMs,
  };
}

export const workerRegisteredEvent = (row: WorkerRow) => ({
  workerId: row.id,
  instanceId: row.instanceId,
  name: row.name,
  pool: row.pool,
  certification: row.certification,
  connectivity: row.connectivity,
});

const INVALID_TOKEN = "The enrollment token is invalid, expired or already used";

export const registerWorker =
  (deps: WorkersDeps): AppRouteHandler<typeof registerWorkerRoute> =>
  async (c) => {
    const request = c.req.valid("json");
    // The pattern admits any 'U…' string; only the NKey's checksum proves it is a key.
    if (!isUserPublicKey(request.publicKey)) {
      throw validationError([
        {
          path: "publicKey",
          message: "is not a valid NKey user public key (checksum mismatch)",
          code: "worker.public_key_invalid",
        },
      ]);
    }
    const tokenHash = await deps.hashToken(request.enrollmentToken);
    const nc = requireBroker(deps);
    const workerId = crypto.randomUUID();
    const row = await deps.sql
      .begin(async (tx) => {
        // Everything below rolls back on failure, leaving the token usable.
        const token = await consumeEnrollmentToken(tx, tokenHash);
        if (!token) throw new ApiError("enrollment.token_invalid", INVALID_TOKEN);
        if (token.pool && token.pool !== request.pool) {
          throw new ApiError(
            "enrollment.pool_mismatch",
            `This enrollment token is for the ${token.pool} pool; the Worker declared ${request.pool}`,
          );
        }
        const inserted = await insertWorker(tx, {
          ...describeWorker(request),
          id: workerId,
          publicKey: request.publicKey,
          instanceId: crypto.randomUUID(),
          enrollmentTokenId: token.id,
        });
        await enqueueOutbox(tx, "worker.registered", workerRegisteredEvent(inserted));
        await ensureWorkerConsumer(nc, deps.subjectPrefix, workerId, deps.broker.streamReplicas);
        return inserted;
      })
      .catch((err: unknown) => {
        if (isPgError(err, pgErrorCode.uniqueViolation)) {
          throw new ApiError(
            "worker.already_registered",
            "A Worker with this public key is already registered; a restarted Worker re-registers by answering a challenge",
          );
        }
        throw err;
      });
    deps.monitor.instanceStarted(row);
    deps.logger.info("worker registered", { workerId: row.id, name: row.name, pool: row.pool });
    return c.json(await registrationAnswer(deps, row), 201);
  };
