/** Recovery tokens: 256 random bits shown once, stored as their SHA-256. Pure. */
import { createHash, randomBytes } from "node:crypto";

const PREFIX = "tjm_rt_";

export function generateRecoveryToken(): string {
  return `${PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** What is stored and looked up: the token is random and long, so a plain hash suffices. */
export function recoveryTokenHash(token: string): Uint8Array {
  return createHash("sha256").update(token).digest();
}
