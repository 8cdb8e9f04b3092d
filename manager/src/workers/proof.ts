/**
 * Proof that a request comes from a registered Worker: the answer to a challenge, signed
 * with the NKey the Worker registered. Used to re-register after a restart and to refresh
 * NATS credentials; never needs the enrollment token again.
 */
import { fromPublic } from "@nats-io/nkeys";
import { type ChallengePurpose, challengeSigningInput } from "@tjm/protocol";
import type { TransactionSql } from "../platform/db.ts";
import { ApiError, type ErrorCode } from "../platform/errors.ts";
import { consumeChallenge, findWorker, type WorkerRow } from "./store.ts";

/** What a request carrying a proof may be refused with: unknown Worker, disabled Worker, bad proof. */
export const PROOF_ERRORS = [
  "worker.not_found",
  "worker.disabled",
  "worker.proof_invalid",
] as const satisfies ErrorCode[];

export function unknownWorker(workerId: string): ApiError {
  return new ApiError(
    "worker.not_found",
    `Worker ${workerId} is not registered; enroll it with a new enrollment token`,
  );
}

export function disabledWorker(row: WorkerRow): ApiError {
  return new ApiError(
    "worker.disabled",
    `Worker ${row.id} was disabled by an operator at ${row.disabledAt?.toISOString()}; enroll it again with a new enrollment token`,
  );
}

const INVALID_PROOF = "The challenge is unknown, expired, already used, or its signature does not verify";

function decodeSignature(signature: string): Uint8Array {
  const binary = atob(signature.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/**
 * Locks the Worker's row, uses the challenge and checks the signature; throws the API error
 * to answer with otherwise. Run inside the transaction that acts on the proof, so a failure
 * later on leaves the challenge unused.
 */
export async function proveWorker(
  tx: TransactionSql,
  proof: { workerId: string; challengeId: string; signature: string; purpose: ChallengePurpose },
): Promise<WorkerRow> {
  const [locked] = await tx<{ id: string }[]>`select id from workers where id = ${proof.workerId} for update`;
  const row = locked && (await findWorker(tx, proof.workerId));
  if (!row) throw unknownWorker(proof.workerId);
  if (row.disabledAt) throw disabledWorker(row);
  const challenge = await consumeChallenge(tx, proof.challengeId, proof.workerId, proof.purpose);
  if (!challenge) throw new ApiError("worker.proof_invalid", INVALID_PROOF);
  const signed = challengeSigningInput(proof.workerId, {
    challengeId: proof.challengeId,
    nonce: challenge.nonce,
    purpose: proof.purpose,
  });
  if (!fromPublic(row.publicKey).verify(signed, decodeSignature(proof.signature))) {
    throw new ApiError("worker.proof_invalid", INVALID_PROOF);
  }
  return row;
}
