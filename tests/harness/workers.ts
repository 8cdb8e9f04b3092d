/** Worker-side steps for tests: enroll, answer challenges, heartbeat — through the real routes. */
import { createUser, type KeyPair } from "@nats-io/nkeys";
import type { NatsConnection } from "@nats-io/transport-node";
import { registrationBody } from "@tjm/devstack/fixtures/worker-registration";
import {
  type ChallengePurpose,
  challengeSigningInput,
  encodeMessage,
  HeartbeatSchema,
  PROTOCOL_VERSION,
  subjects,
  type WorkerChallenge,
  type WorkerRegistrationRequest,
  type WorkerRegistrationResponse,
} from "@tjm/protocol";
import type { TestManager } from "./manager.ts";

export interface EnrolledWorker {
  workerId: string;
  instanceId: string;
  keyPair: KeyPair;
  registration: WorkerRegistrationResponse;
}

export async function issueToken(manager: TestManager, body: Record<string, unknown> = {}): Promise<string> {
  const response = await manager.request("/api/v1/operations/enrollment-tokens", {
    method: "POST",
    json: body,
  });
  if (response.status !== 201) throw new Error(`token: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

export function postJson(manager: TestManager, path: string, body: unknown): Promise<Response> {
  return fetch(`${manager.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

export async function enroll(
  manager: TestManager,
  overrides: Partial<WorkerRegistrationRequest> = {},
): Promise<EnrolledWorker> {
  const keyPair = createUser();
  const enrollmentToken = await issueToken(manager);
  const response = await postJson(
    manager,
    "/api/v1/worker/registrations",
    registrationBody(keyPair, { enrollmentToken, ...overrides }),
  );
  if (response.status !== 201) throw new Error(`registration: ${response.status} ${await response.text()}`);
  const registration = (await response.json()) as WorkerRegistrationResponse;
  return { workerId: registration.workerId, instanceId: registration.instanceId, keyPair, registration };
}

export async function challenge(
  manager: TestManager,
  workerId: string,
  purpose: ChallengePurpose,
): Promise<WorkerChallenge> {
  const response = await postJson(manager, "/api/v1/worker/challenges", {
    protocolVersion: PROTOCOL_VERSION,
    workerId,
    purpose,
  });
  if (response.status !== 201) throw new Error(`challenge: ${response.status} ${await response.text()}`);
  return (await response.json()) as WorkerChallenge;
}

export function sign(keyPair: KeyPair, workerId: string, answered: WorkerChallenge): string {
  return Buffer.from(keyPair.sign(challengeSigningInput(workerId, answered))).toString("base64url");
}

/** The body of a re-registration answering a fresh challenge. */
export async function reRegistrationBody(manager: TestManager, worker: EnrolledWorker) {
  const answered = await challenge(manager, worker.workerId, "re-registration");
  const { enrollmentToken, publicKey, ...description } = registrationBody(worker.keyPair);
  return {
    ...description,
    workerId: worker.workerId,
    challengeId: answered.challengeId,
    signature: sign(worker.keyPair, worker.workerId, answered),
    resumableAttempts: [],
  };
}

/** The body of a credentials refresh answering `answered` (a "credentials" challenge) for the Worker's instance. */
export function credentialsBody(
  worker: Pick<EnrolledWorker, "workerId" | "instanceId" | "keyPair">,
  answered: WorkerChallenge,
) {
  return {
    protocolVersion: PROTOCOL_VERSION,
    workerId: worker.workerId,
    instanceId: worker.instanceId,
    challengeId: answered.challengeId,
    signature: sign(worker.keyPair, worker.workerId, answered),
  };
}

let lastSentAt = 0;

/** Publishes one heartbeat of the Worker's instance on core NATS; sentAt strictly increases. */
export function heartbeat(
  nc: NatsConnection,
  prefix: string,
  worker: { workerId: string; instanceId: string },
  freeCapacity = 4,
): void {
  lastSentAt = Math.max(Date.now(), lastSentAt + 1);
  nc.publish(
    subjects.workerHeartbeat(prefix, worker.workerId),
    encodeMessage(HeartbeatSchema, {
      protocolVersion: PROTOCOL_VERSION,
      workerId: worker.workerId,
      instanceId: worker.instanceId,
      sentAt: new Date(lastSentAt).toISOString(),
      activeAttempts: [],
      freeCapacity,
    }),
  );
}
