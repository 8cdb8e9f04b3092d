import {
  examples,
  PROTOCOL_VERSION,
  WorkerChallengeRequestSchema,
  WorkerChallengeSchema,
} from "@tjm/protocol";
import type { AppRouteHandler } from "../platform/http.ts";
import { randomBase64url } from "../platform/random.ts";
import { apiRoute, BODY_ERRORS, jsonBody, jsonResponse, protocolComponent } from "../platform/routes.ts";
import type { WorkersDeps } from "./deps.ts";
import { disabledWorker, unknownWorker } from "./proof.ts";
import { findWorker, insertChallenge } from "./store.ts";

/** Long enough for a slow host to sign and answer, short enough that a leaked nonce is soon worthless. */
export const CHALLENGE_TTL_SECONDS = 60;
/** 256 bits: never repeated, never guessed. */
const NONCE_BYTES = 32;

export const createChallengeRoute = apiRoute({
  method: "post",
  path: "/challenges",
  tags: ["worker"],
  summary: "Get a nonce to sign with the Worker's NKey",
  operationId: "createWorkerChallenge",
  security: [],
  description:
    "Step one of re-registration (after a restart) and of refreshing NATS credentials. The Worker signs challengeSigningInput(workerId, challenge) from @tjm/protocol with the NKey it registered; the challenge is single use, bound to its purpose, and expires after 60 s.",
  request: jsonBody(
    protocolComponent(
      "WorkerChallengeRequest",
      WorkerChallengeRequestSchema,
      examples.workerChallengeRequest,
    ),
  ),
  responses: {
    201: jsonResponse(
      "The challenge",
      protocolComponent("WorkerChallenge", WorkerChallengeSchema, examples.workerChallenge),
    ),
  },
  errors: ["worker.disabled", "worker.not_found", ...BODY_ERRORS],
});

export const createChallenge =
  (deps: WorkersDeps): AppRouteHandler<typeof createChallengeRoute> =>
  async (c) => {
    const request = c.req.valid("json");
    const worker = await findWorker(deps.sql, request.workerId);
    if (!worker) throw unknownWorker(request.workerId);
    if (worker.disabledAt) throw disabledWorker(worker);
    const challenge = { id: crypto.randomUUID(), nonce: randomBase64url(NONCE_BYTES) };
    const { expiresAt } = await insertChallenge(deps.sql, {
      ...challenge,
      workerId: worker.id,
      purpose: request.purpose,
      ttlSeconds: CHALLENGE_TTL_SECONDS,
    });
    return c.json(
      {
        protocolVersion: PROTOCOL_VERSION,
        challengeId: challenge.id,
        purpose: request.purpose,
        nonce: challenge.nonce,
        expiresAt: expiresAt.toISOString(),
      },
      201,
    );
  };
