/** Enrollment token secrets: generation and the keyed hash that is all the database keeps. No I/O. */
import { randomBase64url } from "../platform/random.ts";

const TOKEN_PREFIX = "tjm_et_";
/** 32 random bytes: 256 bits, out of reach of guessing. */
const TOKEN_BYTES = 32;

/** A new token, shown once to the operator. The prefix makes a leaked one easy to recognise. */
export function generateEnrollmentToken(): string {
  return TOKEN_PREFIX + randomBase64url(TOKEN_BYTES);
}

/** HMAC-SHA256(secret, token): what is stored and what a presented token is looked up by. */
export function createTokenHasher(secret: string): (token: string) => Promise<Uint8Array> {
  const encoder = new TextEncoder();
  const key = crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return async (token) => new Uint8Array(await crypto.subtle.sign("HMAC", await key, encoder.encode(token)));
}
