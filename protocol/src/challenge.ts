/**
 * What a restarted Worker signs with its NKey to answer a re-registration challenge. The
 * bytes name their purpose, the protocol version, the Worker and the challenge, so a
 * signature made here cannot be replayed elsewhere, and no signature the NKey makes
 * elsewhere (a NATS server's connect nonce is signed with the same key) answers a challenge.
 */
import type { ReRegistrationChallenge } from "./messages.ts";
import { PROTOCOL_VERSION } from "./version.ts";

export function reRegistrationSigningInput(
  workerId: string,
  challenge: Pick<ReRegistrationChallenge, "challengeId" | "nonce">,
): Uint8Array {
  return new TextEncoder().encode(
    `tjm worker re-registration\nprotocol ${PROTOCOL_VERSION}\nworker ${workerId}\nchallenge ${challenge.challengeId}\nnonce ${challenge.nonce}\n`,
  );
}
