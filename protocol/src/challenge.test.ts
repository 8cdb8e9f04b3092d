import { generateKeyPairSync, sign, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { challengeSigningInput } from "./challenge.ts";
import { examples } from "./examples.ts";

const WORKER = examples.workerReRegistrationRequest.workerId;
const CHALLENGE = examples.workerChallenge;
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("challengeSigningInput", () => {
  it("names its purpose, the protocol version, the Worker, the challenge and the nonce", () => {
    expect(text(challengeSigningInput(WORKER, CHALLENGE))).toBe(
      `tjm worker re-registration\nprotocol 3\nworker ${WORKER}\nchallenge ${CHALLENGE.challengeId}\nnonce ${CHALLENGE.nonce}\n`,
    );
  });

  it("differs when any of the purpose, the Worker, the challenge or the nonce differs", () => {
    const base = text(challengeSigningInput(WORKER, CHALLENGE));
    const other = "1d2c3b4a-5f6e-4d7c-8b9a-0f1e2d3c4b5a";
    expect(text(challengeSigningInput(WORKER, { ...CHALLENGE, purpose: "credentials" }))).not.toBe(base);
    expect(text(challengeSigningInput(other, CHALLENGE))).not.toBe(base);
    expect(text(challengeSigningInput(WORKER, { ...CHALLENGE, challengeId: other }))).not.toBe(base);
    expect(text(challengeSigningInput(WORKER, { ...CHALLENGE, nonce: `${CHALLENGE.nonce}A` }))).not.toBe(
      base,
    );
  });

  it("an Ed25519 signature of it (what an NKey makes) is 86 base64url characters and verifies only for that challenge", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const signature = sign(null, challengeSigningInput(WORKER, CHALLENGE), privateKey);
    expect(signature.toString("base64url")).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(verify(null, challengeSigningInput(WORKER, CHALLENGE), publicKey, signature)).toBe(true);
    const replayed = challengeSigningInput(WORKER, { ...CHALLENGE, nonce: "AAAAAAAAAAAAAAAAAAAAAAAA" });
    expect(verify(null, replayed, publicKey, signature)).toBe(false);
  });
});
