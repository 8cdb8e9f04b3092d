/**
 * What a Worker signs with its NKey to answer a challenge. The bytes name their purpose, the
 * protocol version, the Worker and the challenge, so a signature made for one purpose or
 * challenge cannot be replayed for another, and no signature the NKey makes elsewhere (a
 * NATS server's connect nonce is signed with the same key) answers a challenge.
 */
import type { WorkerChallenge } from "./messages.ts";
import { PROTOCOL_VERSION } from "./version.ts";

export function challengeSigningInput(
  workerId: string,
  challenge: Pick<WorkerChallenge, "challengeId" | "nonce" | "purpose">,
): Uint8Array {
  return new TextEncoder().encode(
    `tjm worker ${challenge.purpose}\nprotocol ${PROTOCOL_VERSION}\nworker ${workerId}\nchallenge ${challenge.challengeId}\nnonce ${challenge.nonce}\n`,
  );
}
