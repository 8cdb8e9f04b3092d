/**
 * Avatar uploads (docs/profile.md): a presigned PUT to a per-account staging key, then a claim
 * that reads the staged object, checks and re-encodes it (avatar-image.ts) and writes it under
 * the account's avatar key. The staged object is deleted whatever the claim decides; one never
 * claimed is deleted by the sweep an hour after its URL was made. The avatar_uploads rows of the
 * last hour are also the account's count of upload URLs.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import type { Logger } from "@tjm/platform";
import {
  deleteObject,
  deletePrefix,
  formatS3Uri,
  InputNotFoundError,
  ObjectTooLargeError,
  presignPut,
  putSmallObject,
  readSmallObject,
} from "@tjm/storage";
import type { Sql } from "../../platform/db.ts";
import { writeAuditEvent } from "../audit.ts";
import {
  AVATAR_MAX_BYTES,
  AVATAR_STORED_TYPE,
  type AvatarContentType,
  AvatarImageRefusedError,
  hasSignatureOf,
  reencodeAvatar,
} from "./avatar-image.ts";
import type { ProfileActor } from "./profile.ts";

/** Where avatars live: AVATAR_BUCKET, through the Manager's one S3 client. */
export interface AvatarStorage {
  client: () => S3Client;
  bucket: string;
}

/** A presigned PUT lives 5 minutes: long enough for 2 MiB on a slow line, short if it leaks. */
export const AVATAR_UPLOAD_URL_SECONDS = 300;
/** Upload URLs per account per hour (sliding). */
export const AVATAR_UPLOADS_PER_HOUR = 10;
/** A staged upload not claimed within an hour is deleted; its row counts that long too. */
export const AVATAR_UPLOAD_LIFETIME_SECONDS = 3600;

const stagingKey = (accountId: string, uploadId: string) => `avatar-staging/${accountId}/${uploadId}`;
const avatarKey = (accountId: string, uploadId: string) => `avatars/${accountId}/${uploadId}.webp`;

export interface AvatarUploadUrl {
  uploadId: string;
  url: string;
  expiresAt: Date;
}

export type AvatarUploadUrlOutcome =
  | { created: AvatarUploadUrl }
  | { refused: "rate_limited"; retryAfterSeconds: number };

/**
 * Counts and records an upload URL atomically: the account's row is locked while its last
 * hour's uploads are counted, so concurrent requests cannot all see room for one more.
 */
export async function createAvatarUploadUrl(
  sql: Sql,
  storage: AvatarStorage,
  actor: ProfileActor,
  terms: { contentType: AvatarContentType; contentLength: number },
): Promise<AvatarUploadUrlOutcome> {
  const uploadId = crypto.randomUUID();
  const key = stagingKey(actor.accountId, uploadId);
  const counted = await sql.begin(async (tx): Promise<{ retryAfterSeconds: number } | { now: Date }> => {
    await tx`select 1 from accounts where id = ${actor.accountId} for update`;
    const [window] = await tx<{ count: number; oldest: Date | null; now: Date }[]>`
      select count(*)::int as count, min(created_at) as oldest, now() as now from avatar_uploads
      where account_id = ${actor.accountId}
        and created_at > now() - make_interval(secs => ${AVATAR_UPLOAD_LIFETIME_SECONDS})`;
    const { count, oldest, now } = window as { count: number; oldest: Date | null; now: Date };
    const audit = { actorAccountId: actor.accountId, clientId: actor.clientId };
    if (count >= AVATAR_UPLOADS_PER_HOUR && oldest !== null) {
      await writeAuditEvent(tx, {
        event: "account.avatar-upload-url-created",
        result: "failure",
        ...audit,
        details: { accountId: actor.accountId, reason: "rate_limited" },
      });
      const freesAt = oldest.getTime() + AVATAR_UPLOAD_LIFETIME_SECONDS * 1000;
      return { retryAfterSeconds: Math.max(1, Math.ceil((freesAt - now.getTime()) / 1000)) };
    }
    await tx`
      insert into avatar_uploads (id, account_id, staging_key, content_type, content_length)
      values (${uploadId}, ${actor.accountId}, ${key}, ${terms.contentType}, ${terms.contentLength})`;
    await writeAuditEvent(tx, {
      event: "account.avatar-upload-url-created",
      result: "success",
      ...audit,
      details: { accountId: actor.accountId, avatarUploadId: uploadId, contentType: terms.contentType },
    });
    return { now };
  });
  if ("retryAfterSeconds" in counted) {
    return { refused: "rate_limited", retryAfterSeconds: counted.retryAfterSeconds };
  }
  const url = await presignPut(
    storage.client(),
    formatS3Uri({ bucket: storage.bucket, key }),
    terms,
    AVATAR_UPLOAD_URL_SECONDS,
  );
  return {
    created: { uploadId, url, expiresAt: new Date(counted.now.getTime() + AVATAR_UPLOAD_URL_SECONDS * 1000) },
  };
}

/**
 * Why an upload was not made the avatar: `unknown` (no such upload of this account, claimed
 * already, or older than an hour), `missing` (nothing was uploaded yet: the upload can still be
 * claimed), `too_large`, `unsupported` (not the declared image type, or not decodable),
 * `too_many_pixels`.
 */
export type AvatarRefusal = "unknown" | "missing" | "too_large" | "unsupported" | "too_many_pixels";

export class AvatarRefusedError extends Error {
  constructor(readonly refusal: AvatarRefusal) {
    super(`the avatar upload is refused: ${refusal}`);
  }
}

/**
 * Makes the staged upload an avatar object and answers its key; the caller stores the key with
 * the profile. The upload is taken by one conditional UPDATE first, so two claims of one upload
 * cannot both proceed. Throws AvatarRefusedError; the staged object is deleted unless it was
 * `missing` or `unknown`.
 */
export async function storeAvatarFromUpload(
  sql: Sql,
  storage: AvatarStorage,
  accountId: string,
  uploadId: string,
  logger: Logger,
): Promise<string> {
  const [upload] = await sql<{ stagingKey: string; contentType: AvatarContentType; contentLength: number }[]>`
    update avatar_uploads set settled_at = now()
    where id = ${uploadId} and account_id = ${accountId} and settled_at is null
      and created_at > now() - make_interval(secs => ${AVATAR_UPLOAD_LIFETIME_SECONDS})
    returning staging_key, content_type, content_length`;
  if (!upload) throw new AvatarRefusedError("unknown");
  const client = storage.client();
  const staged = formatS3Uri({ bucket: storage.bucket, key: upload.stagingKey });
  let bytes: Uint8Array;
  try {
    ({ bytes } = await readSmallObject(client, staged, AVATAR_MAX_BYTES));
  } catch (error) {
    if (error instanceof ObjectTooLargeError) {
      await deleteStaged(client, staged, logger);
      throw new AvatarRefusedError("too_large");
    }
    // Claimed before the upload finished, or storage failing now: it stays claimable.
    await sql`update avatar_uploads set settled_at = null where id = ${uploadId}`;
    if (error instanceof InputNotFoundError) throw new AvatarRefusedError("missing");
    throw error;
  }
  try {
    if (bytes.byteLength !== upload.contentLength) throw new AvatarRefusedError("too_large");
    if (!hasSignatureOf(bytes, upload.contentType)) throw new AvatarRefusedError("unsupported");
    let encoded: Uint8Array;
    try {
      encoded = await reencodeAvatar(bytes);
    } catch (error) {
      if (!(error instanceof AvatarImageRefusedError)) throw error;
      throw new AvatarRefusedError(error.refusal === "too_many_pixels" ? "too_many_pixels" : "unsupported");
    }
    const key = avatarKey(accountId, uploadId);
    await putSmallObject(client, formatS3Uri({ bucket: storage.bucket, key }), encoded, AVATAR_STORED_TYPE);
    return key;
  } finally {
    await deleteStaged(client, staged, logger);
  }
}

/** A staged object that cannot be deleted now is the sweep's: logged, never the request's failure. */
async function deleteStaged(client: S3Client, uri: string, logger: Logger): Promise<void> {
  await deleteObject(client, uri).catch((error) =>
    logger.warn("a staged avatar upload was not deleted; the sweep retries", { uri, error: String(error) }),
  );
}

/** An avatar object no longer in use (replaced or removed). */
export async function deleteAvatarObject(storage: AvatarStorage, key: string, logger: Logger): Promise<void> {
  await deleteObject(storage.client(), formatS3Uri({ bucket: storage.bucket, key })).catch((error) =>
    logger.warn("a replaced avatar was not deleted", { key, error: String(error) }),
  );
}

/**
 * Every avatar object of a deleted account, stored or staged. Called after the deletion's commit:
 * storage cannot take part in the transaction, and a failure must not bring the account back,
 * so it is logged with the prefix left behind for an operator to remove. Never throws.
 */
export async function deleteAvatarsOf(
  storage: AvatarStorage,
  accountId: string,
  logger: Logger,
): Promise<void> {
  await Promise.all(
    [`avatars/${accountId}/`, `avatar-staging/${accountId}/`].map(async (key) => {
      const prefix = formatS3Uri({ bucket: storage.bucket, key });
      await deletePrefix(storage.client(), prefix).catch((error: unknown) =>
        logger.error("a deleted account's avatar objects were not deleted", { prefix, error: String(error) }),
      );
    }),
  );
}

/** The stored avatar's bytes (AVATAR_STORED_TYPE). */
export async function readAvatar(storage: AvatarStorage, key: string): Promise<Uint8Array> {
  const { bytes } = await readSmallObject(
    storage.client(),
    formatS3Uri({ bucket: storage.bucket, key }),
    AVATAR_MAX_BYTES,
  );
  return bytes;
}

/**
 * Deletes the uploads older than an hour: the staged object of one never claimed (a claimed one
 * was deleted by its claim), then the rows. A row whose object could not be deleted stays for
 * the next sweep. Answers how many rows went.
 */
export async function sweepAvatarUploads(
  sql: Sql,
  storage: AvatarStorage,
  logger: Logger,
  batch = 100,
): Promise<number> {
  const rows = await sql<{ id: string; stagingKey: string; settledAt: Date | null }[]>`
    select id, staging_key, settled_at from avatar_uploads
    where created_at <= now() - make_interval(secs => ${AVATAR_UPLOAD_LIFETIME_SECONDS})
    order by created_at limit ${batch}`;
  const done: string[] = [];
  for (const row of rows) {
    if (row.settledAt === null) {
      try {
        await deleteObject(storage.client(), formatS3Uri({ bucket: storage.bucket, key: row.stagingKey }));
      } catch (error) {
        logger.warn("an unclaimed avatar upload was not deleted", {
          key: row.stagingKey,
          error: String(error),
        });
        continue;
      }
    }
    done.push(row.id);
  }
  if (done.length > 0) await sql`delete from avatar_uploads where id = any(${done}::uuid[])`;
  return done.length;
}

/** Sweeps every `intervalMs` until stopped. */
export function startAvatarUploadSweep(
  sql: Sql,
  storage: AvatarStorage,
  logger: Logger,
  intervalMs: number,
): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepAvatarUploads(sql, storage, logger).catch((error) =>
      logger.warn("the avatar upload sweep failed", { error: String(error) }),
    );
  }, intervalMs);
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** A request for an upload URL refused before one was made (its type or length): its failure row. */
export async function recordAvatarUploadUrlRefused(
  sql: Sql,
  actor: ProfileActor,
  reason: "unsupported_type" | "too_large",
): Promise<void> {
  await writeAuditEvent(sql, {
    event: "account.avatar-upload-url-created",
    result: "failure",
    actorAccountId: actor.accountId,
    clientId: actor.clientId,
    details: { accountId: actor.accountId, reason },
  });
}
