/**
 * Tokens at rest: AES-256-GCM under a key derived (HKDF-SHA256) from ADMIN_SESSION_KEY, with the
 * row's id hash as additional data, so a sealed value copied into another row does not open.
 * Layout: 12-byte IV, 16-byte tag, ciphertext.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealer {
  seal(value: unknown, boundTo: Uint8Array): Buffer;
  open<T>(sealed: Uint8Array, boundTo: Uint8Array): T;
}

export function createSealer(secret: string): Sealer {
  const key = Buffer.from(hkdfSync("sha256", secret, "tjm-admin", "session tokens v1", 32));
  return {
    seal(value, boundTo) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(boundTo);
      const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
    },
    open<T>(sealed: Uint8Array, boundTo: Uint8Array): T {
      const bytes = Buffer.from(sealed);
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(boundTo);
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      return JSON.parse(plain.toString("utf8")) as T;
    },
  };
}
