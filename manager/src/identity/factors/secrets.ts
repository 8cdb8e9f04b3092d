/**
 * TOTP secrets at rest: AES-256-GCM under MFA_SECRET_ENCRYPTION_KEY (or a key derived from
 * ENROLLMENT_TOKEN_SECRET with its own HKDF label). A secret must be read back to check a code,
 * so it is encrypted, not hashed; the factor's id is the additional data, so a ciphertext copied
 * onto another factor row does not decrypt.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The key factor secrets are encrypted under, from the setting or the root secret given. */
export function factorSecretKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "", "tjm/mfa-factor-secrets", 32));
}

export function encryptFactorSecret(key: Buffer, boundTo: string, secret: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(boundTo));
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

export function decryptFactorSecret(key: Buffer, boundTo: string, stored: Buffer): string {
  const decipher = createDecipheriv("aes-256-gcm", key, stored.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(boundTo));
  decipher.setAuthTag(stored.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(stored.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
    "utf8",
  );
}
