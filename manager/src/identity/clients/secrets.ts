/**
 * OAuth client secrets: generated here, shown once, and stored only as HMAC-SHA-256 under a
 * server key. Not a slow hash: the secret has 256 random bits, so nothing is gained against
 * guessing, and every client authentication would spend our CPU (an attacker's to spend).
 */
import { hmac } from "@oslojs/crypto/hmac";
import { SHA256 } from "@oslojs/crypto/sha2";
import { constantTimeEqual } from "@oslojs/crypto/subtle";
import { encodeBase64urlNoPadding } from "@oslojs/encoding";
import { randomBase64url } from "../../platform/random.ts";

const CLIENT_SECRET_PREFIX = "tjm_cs_";
/** 32 random bytes: 256 bits. */
const CLIENT_SECRET_BYTES = 32;

const encoder = new TextEncoder();

/** A new secret. The prefix makes a leaked one easy to recognise (and to find with secret scanners). */
export function generateClientSecret(): string {
  return CLIENT_SECRET_PREFIX + randomBase64url(CLIENT_SECRET_BYTES);
}

/**
 * HMAC-SHA-256(key, secret) in base64url without padding (43 characters): all the database keeps
 * of a client secret (oauth_clients.client_secret_hmac).
 */
export function hashClientSecret(secret: string, key: string): string {
  return encodeBase64urlNoPadding(hmac(SHA256, encoder.encode(key), encoder.encode(secret)));
}

/** Whether `secret` is the one `storedHmac` was made from, compared in constant time. */
export function verifyClientSecret(secret: string, storedHmac: string, key: string): boolean {
  return constantTimeEqual(encoder.encode(hashClientSecret(secret, key)), encoder.encode(storedHmac));
}
