/**
 * The provider's signing keys: generated here, stored in PostgreSQL with the private half
 * encrypted, and rotated without downtime. Which keys are published and which one signs is a
 * pure function of the stored keys and the database's clock (`keySetAt`), so every replica
 * that reads the table agrees.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from "jose";
import { writeAuditEvent } from "../identity/audit.ts";
import type { Sql } from "../platform/db.ts";

export const SIGNING_ALGORITHM = "RS256";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A derived key for one purpose; PROVIDER_KEY_ENCRYPTION_KEY itself never meets a cipher. */
export function deriveKey(
  keyMaterial: string,
  purpose: "signing keys" | "cookies" | "browser cookies",
): Buffer {
  return Buffer.from(hkdfSync("sha256", keyMaterial, "", `tjm provider ${purpose} v1`, 32));
}

export function encryptJwk(jwk: JWK, key: Buffer, kid: string): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  // The kid is authenticated with the key: a ciphertext moved to another row does not decrypt.
  cipher.setAAD(Buffer.from(kid));
  const body = Buffer.concat([cipher.update(JSON.stringify(jwk), "utf8"), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

export class KeyDecryptionError extends Error {}

export function decryptJwk(encrypted: Uint8Array, key: Buffer, kid: string): JWK {
  const data = Buffer.from(encrypted);
  const decipher = createDecipheriv("aes-256-gcm", key, data.subarray(0, NONCE_BYTES));
  decipher.setAAD(Buffer.from(kid));
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  try {
    const plain = Buffer.concat([
      decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return JSON.parse(plain.toString("utf8")) as JWK;
  } catch {
    throw new KeyDecryptionError(
      `signing key ${kid} does not decrypt: PROVIDER_KEY_ENCRYPTION_KEY is not the key it was stored under`,
    );
  }
}

export interface StoredKey {
  kid: string;
  createdAt: Date;
  signsFrom: Date;
}

export interface KeySet<K extends StoredKey = StoredKey> {
  /** The key that signs now; undefined only before the first key's signs_from. */
  signing: K | undefined;
  /** Every key a verifier must know now: the signing key first, then newer, then older. */
  published: K[];
  /** Keys whose tokens have all expired: never published again. */
  retired: K[];
}

/**
 * Which keys are published and which signs at `now`. A key signs from its signs_from until a
 * newer key's signs_from; it stays published for `retentionMs` after that (the longest lifetime
 * of a token it signed), and a key not yet signing is published already.
 */
export function keySetAt<K extends StoredKey>(keys: K[], now: Date, retentionMs: number): KeySet<K> {
  const bySigningStart = [...keys].sort(
    (a, b) => a.signsFrom.getTime() - b.signsFrom.getTime() || a.kid.localeCompare(b.kid),
  );
  const started = bySigningStart.filter((key) => key.signsFrom <= now);
  const signing = started.at(-1);
  const published: K[] = signing ? [signing] : [];
  const retired: K[] = [];
  for (const key of bySigningStart.filter((k) => k.signsFrom > now)) published.push(key);
  for (let index = started.length - 2; index >= 0; index--) {
    const key = started[index] as K;
    const successor = started[index + 1] as K;
    const retiredAt = successor.signsFrom.getTime() + retentionMs;
    (retiredAt <= now.getTime() ? retired : published).push(key);
  }
  return { signing, published, retired };
}

interface KeyRow {
  kid: string;
  publicJwk: JWK;
  privateJwkEncrypted: Uint8Array;
  createdAt: Date;
  signsFrom: Date;
}

async function newKey(): Promise<{ kid: string; publicJwk: JWK; privateJwk: JWK }> {
  const pair = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true, modulusLength: 2048 });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const labels = { kid, alg: SIGNING_ALGORITHM, use: "sig" };
  return {
    kid,
    publicJwk: { ...publicJwk, ...labels },
    privateJwk: { ...(await exportJWK(pair.privateKey)), ...labels },
  };
}

async function insertKey(sql: Sql, encryptionKey: Buffer, leadSeconds: number): Promise<KeyRow> {
  const key = await newKey();
  const [row] = await sql<KeyRow[]>`
    insert into provider_signing_keys (kid, alg, public_jwk, private_jwk_encrypted, signs_from)
    values (${key.kid}, ${SIGNING_ALGORITHM}, ${sql.json(key.publicJwk as never)},
      ${encryptJwk(key.privateJwk, encryptionKey, key.kid)},
      now() + make_interval(secs => ${leadSeconds}))
    returning kid, public_jwk, private_jwk_encrypted, created_at, signs_from`;
  return row as KeyRow;
}

/**
 * The first key of an installation, signing at once. Replicas starting together make one key:
 * the advisory lock orders them and the later ones find it.
 */
export async function ensureSigningKey(sql: Sql, encryptionKey: Buffer): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('tjm provider signing keys'))`;
    const [existing] = await tx`select 1 from provider_signing_keys limit 1`;
    if (!existing) await insertKey(tx as unknown as Sql, encryptionKey, 0);
  });
}

export interface Rotation {
  kid: string;
  publishedAt: string;
  signsFrom: string;
  /** The key the new one replaces, and when it stops being published. */
  previous: { kid: string; retiresAt: string } | null;
  /** Keys deleted because every token they signed has expired. */
  deleted: string[];
}

/**
 * Adds a key that is published now and signs after the lead; deletes the keys already retired.
 * One audit row records it.
 */
export async function rotateSigningKey(
  sql: Sql,
  encryptionKey: Buffer,
  options: { leadSeconds: number; retentionMs: number },
): Promise<Rotation> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('tjm provider signing keys'))`;
    const added = await insertKey(tx as unknown as Sql, encryptionKey, options.leadSeconds);
    const [{ now } = { now: new Date() }] = await tx<{ now: Date }[]>`select now()`;
    const keys = await tx<StoredKey[]>`select kid, created_at, signs_from from provider_signing_keys`;
    const before = keySetAt(
      keys.filter((key) => key.kid !== added.kid),
      now,
      options.retentionMs,
    );
    const deleted = keySetAt(keys, now, options.retentionMs).retired.map((key) => key.kid);
    if (deleted.length > 0) await tx`delete from provider_signing_keys where kid in ${tx(deleted)}`;
    const previous = before.signing;
    const rotation: Rotation = {
      kid: added.kid,
      publishedAt: added.createdAt.toISOString(),
      signsFrom: added.signsFrom.toISOString(),
      previous: previous
        ? {
            kid: previous.kid,
            retiresAt: new Date(added.signsFrom.getTime() + options.retentionMs).toISOString(),
          }
        : null,
      deleted,
    };
    await writeAuditEvent(tx, {
      event: "provider.key-rotated",
      result: "success",
      details: { via: "cli", kid: added.kid, previousKid: previous?.kid ?? null, deleted },
    });
    return rotation;
  });
}

export interface LoadedKeys {
  /** Private JWKs in the provider's order: the first one signs. */
  jwks: JWK[];
  signingKid: string | undefined;
  /** Changes whenever the published set or the signing key does. */
  fingerprint: string;
}

/** The keys as the provider needs them at the database's now. */
export async function loadSigningKeys(
  sql: Sql,
  encryptionKey: Buffer,
  retentionMs: number,
): Promise<LoadedKeys> {
  const [{ now } = { now: new Date() }] = await sql<{ now: Date }[]>`select now()`;
  const rows = await sql<KeyRow[]>`
    select kid, public_jwk, private_jwk_encrypted, created_at, signs_from from provider_signing_keys`;
  const set = keySetAt(rows, now, retentionMs);
  return {
    jwks: set.published.map((row) => decryptJwk(row.privateJwkEncrypted, encryptionKey, row.kid)),
    signingKid: set.signing?.kid,
    fingerprint: set.published.map((row) => row.kid).join(","),
  };
}
