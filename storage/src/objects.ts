/**
 * Small whole-object operations: writing a log or manifest from memory, reading the tail of a
 * log, removing one object (a promoted staging object) or everything under a prefix (an
 * attempt's staging area).
 */
import { createHash } from "node:crypto";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { toStorageError } from "./errors.ts";
import { type RetryOptions, retryContext, withRetry } from "./retry.ts";
import { runBounded } from "./run-bounded.ts";
import { formatS3Uri, splitS3Uri } from "./uri.ts";

/**
 * Writes a body held in memory (a log, a manifest, a small output) with one PutObject, and
 * returns its SHA-256. The hash is computed once here and signed as the request's
 * x-amz-content-sha256, which the SDK would otherwise compute again to sign: the store checks
 * the body against it, so the digest returned is the one the store verified.
 */
export async function putSmallObject(
  client: S3Client,
  uri: string,
  body: string | Uint8Array,
  contentType: string,
  options: RetryOptions = {},
): Promise<{ etag: string | undefined; sha256: string }> {
  const { bucket, key } = splitS3Uri(uri);
  const sha256 = createHash("sha256").update(body).digest("hex");
  try {
    const answer = await withRetry(
      () => {
        const command = new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentType: contentType,
        });
        command.middlewareStack.add(
          (next) => (args) => {
            (args.request as { headers: Record<string, string> }).headers["x-amz-content-sha256"] = sha256;
            return next(args);
          },
          { step: "build", name: "signKnownSha256" },
        );
        return client.send(command, { abortSignal: options.signal });
      },
      retryContext("put", uri, options),
    );
    return { etag: answer.ETag, sha256 };
  } catch (error) {
    throw toStorageError(error, "put", uri, options.signal);
  }
}

/** Deletes one object; a key that is already gone is no error (S3 answers 204 either way). */
export async function deleteObject(client: S3Client, uri: string, options: RetryOptions = {}): Promise<void> {
  const { bucket, key } = splitS3Uri(uri);
  try {
    await withRetry(
      () =>
        client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: options.signal }),
      retryContext("delete", uri, options),
    );
  } catch (error) {
    throw toStorageError(error, "delete", uri, options.signal);
  }
}

/** 4 deletes in flight: quick for an attempt's handful of keys, gentle on the store. */
const DELETE_CONCURRENCY = 4;

/**
 * Deletes every object whose key starts with the URI's key (a plain string prefix: end it
 * with "/" to stay inside one "folder"); returns how many. One DeleteObject per key, because
 * DeleteObjects needs Content-MD5 on some stores (Swift) and the SDK no longer sends it.
 */
export async function deletePrefix(
  client: S3Client,
  prefixUri: string,
  options: RetryOptions = {},
): Promise<number> {
  const { bucket, key: prefix } = splitS3Uri(prefixUri);
  const { signal } = options;
  let deleted = 0;
  try {
    let token: string | undefined;
    do {
      const page = await withRetry(
        () =>
          client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
            {
              abortSignal: signal,
            },
          ),
        retryContext("list", prefixUri, options),
      );
      const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : []));
      await runBounded(
        keys,
        DELETE_CONCURRENCY,
        async (key, poolSignal) => {
          const uri = formatS3Uri({ bucket, key });
          await withRetry(
            () => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal }),
            retryContext("delete", uri, { ...options, signal: poolSignal }),
          );
          deleted++;
        },
        signal,
      );
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  } catch (error) {
    throw toStorageError(error, "delete prefix", prefixUri, signal);
  }
}

/** The last bytes of an object, where they start, and the object's whole size. */
export interface ObjectTail {
  bytes: Uint8Array;
  start: number;
  totalBytes: number;
}

/**
 * The last `maxBytes` of an object (a log), read with HeadObject then one ranged GetObject.
 * An explicit first-last range rather than a suffix range (`bytes=-N`): s3rver reads a suffix
 * range as `bytes=0-N`, the head of the object. A missing object is InputNotFoundError.
 */
export async function readObjectTail(
  client: S3Client,
  uri: string,
  maxBytes: number,
  options: RetryOptions = {},
): Promise<ObjectTail> {
  const { bucket, key } = splitS3Uri(uri);
  try {
    const head = await withRetry(
      () => client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: options.signal }),
      retryContext("head", uri, options),
    );
    const totalBytes = head.ContentLength ?? 0;
    if (totalBytes === 0) return { bytes: new Uint8Array(), start: 0, totalBytes };
    const start = Math.max(0, totalBytes - maxBytes);
    const bytes = await withRetry(
      async () => {
        const answer = await client.send(
          new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${totalBytes - 1}` }),
          { abortSignal: options.signal },
        );
        return (await answer.Body?.transformToByteArray()) ?? new Uint8Array();
      },
      retryContext("get", uri, options),
    );
    return { bytes, start, totalBytes };
  } catch (error) {
    throw toStorageError(error, "read the tail of", uri, options.signal);
  }
}

/** An object larger than the reader agreed to hold in memory. */
export class ObjectTooLargeError extends Error {
  constructor(
    readonly uri: string,
    readonly totalBytes: number,
    readonly maxBytes: number,
  ) {
    super(`${uri} holds ${totalBytes} bytes, more than the ${maxBytes} read into memory`);
  }
}

/**
 * A whole small object (an avatar, a staged upload) read into memory with one GetObject. One
 * over `maxBytes` is ObjectTooLargeError, found from its length before its body is read; a
 * missing one is InputNotFoundError.
 */
export async function readSmallObject(
  client: S3Client,
  uri: string,
  maxBytes: number,
  options: RetryOptions = {},
): Promise<{ bytes: Uint8Array; contentType: string | undefined }> {
  const { bucket, key } = splitS3Uri(uri);
  let answer: GetObjectCommandOutput;
  try {
    answer = await withRetry(
      () => client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: options.signal }),
      retryContext("get", uri, options),
    );
  } catch (error) {
    throw toStorageError(error, "read", uri, options.signal);
  }
  const totalBytes = answer.ContentLength ?? 0;
  if (totalBytes > maxBytes) {
    // Not read: the connection goes, rather than the body downloaded to be thrown away.
    (answer.Body as { destroy?: () => void } | undefined)?.destroy?.();
    throw new ObjectTooLargeError(uri, totalBytes, maxBytes);
  }
  const bytes = (await answer.Body?.transformToByteArray()) ?? new Uint8Array();
  if (bytes.byteLength > maxBytes) throw new ObjectTooLargeError(uri, bytes.byteLength, maxBytes);
  return { bytes, contentType: answer.ContentType };
}
