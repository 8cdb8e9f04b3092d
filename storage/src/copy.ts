/**
 * Server-side copy of one object, pinned to the source's ETag (x-amz-copy-source-if-match) so
 * a source rewritten between the HEAD and the copy fails the copy instead of copying another
 * version. CopyObject takes at most 5 GiB; a larger object is copied as a multipart upload of
 * UploadPartCopy ranges (512 MiB each), every range pinned, so a copy never mixes two versions;
 * a multipart copy that fails is aborted.
 *
 * Swift 2.30's s3api compares the condition with its own manifest ETag, not the
 * "<md5>-<parts>" ETag it reports for a multipart object, and answers 412 although the source
 * is unchanged. On exactly that answer (a multipart ETag, and a second HEAD showing the same
 * ETag) the copy runs again without the condition and is then checked by size: the
 * destination's ContentLength must be the source's (and `expectedBytes`). That check catches a
 * missing, truncated or different-length object; it cannot catch content of the same length
 * that differs (a source rewritten with as many bytes), which only a checksum of the copy would.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  type S3Client,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import { classifyStorageError, InputNotFoundError, StorageFailedError, toStorageError } from "./errors.ts";
import { COPY_PART_SIZE, MAX_SINGLE_COPY_SIZE, planCopyParts } from "./parts.ts";
import { type RetryOptions, retryContext, silentLogger, withRetry } from "./retry.ts";
import { runBounded } from "./run-bounded.ts";
import { copySource, type S3Location, splitS3Uri } from "./uri.ts";

export interface CopyOptions extends RetryOptions {
  /** Objects larger than this are copied in parts; default (and S3's maximum) 5 GiB. */
  multipartThreshold?: number;
  /** Default 512 MiB. */
  partSize?: number;
  /** Part copies in flight; default 4. */
  concurrency?: number;
  /**
   * The size the source must have (the Manager passes what the attempt's completed report
   * recorded): checked on the source before anything is written, and on the destination of a
   * copy the store would not pin.
   */
  expectedBytes?: number;
}

export interface CopyResult {
  bytes: number;
  etag: string | undefined;
  multipart: boolean;
}

/** An object does not have the size it must have; nothing about it will change on a retry. */
export class CopyMismatchError extends Error {
  override readonly name = "CopyMismatchError";
  constructor(
    readonly uri: string,
    readonly expectedBytes: number,
    readonly actualBytes: number | undefined,
  ) {
    super(
      actualBytes === undefined
        ? `no object at ${uri}, where ${expectedBytes} bytes were expected`
        : `${uri} holds ${actualBytes} bytes where ${expectedBytes} were expected`,
    );
  }
}

/** S3's ETag of a multipart upload: the MD5 of the parts' MD5s, a dash and the part count. */
const MULTIPART_ETAG = /^"?[0-9a-f]{32}-\d+"?$/i;

const isPreconditionFailed = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode === 412;

export async function copyObject(
  client: S3Client,
  fromUri: string,
  toUri: string,
  options: CopyOptions = {},
): Promise<CopyResult> {
  const from = splitS3Uri(fromUri);
  const to = splitS3Uri(toUri);
  const { signal } = options;
  const source = await headObject(client, from, "copy from", fromUri, options);
  const bytes = source.ContentLength ?? 0;
  if (options.expectedBytes !== undefined && bytes !== options.expectedBytes) {
    throw new CopyMismatchError(fromUri, options.expectedBytes, bytes);
  }
  const target = { from, fromUri, to, toUri, bytes, head: source };
  try {
    try {
      if (source.ETag !== undefined) {
        return await copyOnce(client, target, source.ETag, options);
      }
    } catch (error) {
      if (!(await conditionRefused(client, error, target, options))) throw error;
      (options.logger ?? silentLogger).warn("the store refused the copy's ETag condition; copying unpinned", {
        from: fromUri,
        to: toUri,
        etag: source.ETag,
      });
    }
    const copied = await copyOnce(client, target, undefined, options);
    await checkCopySize(client, target, options);
    return copied;
  } catch (error) {
    // The source went away between the HEAD and the copy.
    if (!signal?.aborted && classifyStorageError(error) === "no-such-key")
      throw new InputNotFoundError(fromUri, error);
    throw toStorageError(error, "copy to", toUri, signal);
  }
}

/**
 * A 412 for a multipart ETag while the source still has that ETag: the store, not the source,
 * refused the condition (Swift 2.30). A 412 for any other ETag, or a changed source, is a
 * source rewritten mid-copy and fails the copy.
 */
async function conditionRefused(
  client: S3Client,
  error: unknown,
  target: CopyTarget,
  options: CopyOptions,
): Promise<boolean> {
  const etag = target.head.ETag ?? "";
  if (options.signal?.aborted || !isPreconditionFailed(error) || !MULTIPART_ETAG.test(etag)) return false;
  const now = await headObject(client, target.from, "copy from", target.fromUri, options);
  return now.ETag === etag;
}

/** The destination of an unpinned copy must be as long as the source was when it was checked. */
async function checkCopySize(client: S3Client, target: CopyTarget, options: CopyOptions): Promise<void> {
  const copy = await headObject(client, target.to, "check copy", target.toUri, options).catch((error) => {
    if (error instanceof InputNotFoundError)
      throw new CopyMismatchError(target.toUri, target.bytes, undefined);
    throw error;
  });
  if (copy.ContentLength !== target.bytes) {
    throw new CopyMismatchError(target.toUri, target.bytes, copy.ContentLength);
  }
}

interface CopyTarget {
  from: S3Location;
  fromUri: string;
  to: S3Location;
  toUri: string;
  bytes: number;
  head: HeadObjectCommandOutput;
}

async function headObject(
  client: S3Client,
  location: S3Location,
  operation: string,
  uri: string,
  options: CopyOptions,
): Promise<HeadObjectCommandOutput> {
  try {
    return await withRetry(
      () =>
        client.send(new HeadObjectCommand({ Bucket: location.bucket, Key: location.key }), {
          abortSignal: options.signal,
        }),
      retryContext(operation, uri, options),
    );
  } catch (error) {
    throw toStorageError(error, operation, uri, options.signal);
  }
}

/** One copy, pinned to `ifMatch` when given. */
async function copyOnce(
  client: S3Client,
  target: CopyTarget,
  ifMatch: string | undefined,
  options: CopyOptions,
): Promise<CopyResult> {
  const { from, to, toUri, bytes } = target;
  if (bytes <= (options.multipartThreshold ?? MAX_SINGLE_COPY_SIZE)) {
    const answer = await withRetry(
      () =>
        client.send(
          new CopyObjectCommand({
            Bucket: to.bucket,
            Key: to.key,
            CopySource: copySource(from),
            CopySourceIfMatch: ifMatch,
          }),
          { abortSignal: options.signal },
        ),
      retryContext("copy to", toUri, options),
    );
    return { bytes, etag: answer.CopyObjectResult?.ETag, multipart: false };
  }
  return { bytes, etag: await copyInParts(client, target, ifMatch, options), multipart: true };
}

async function copyInParts(
  client: S3Client,
  target: CopyTarget,
  ifMatch: string | undefined,
  options: CopyOptions,
): Promise<string | undefined> {
  const { signal } = options;
  const { from, to, toUri, bytes, head } = target;
  // CopyObject keeps content type and metadata; so does this.
  const created = await withRetry(
    () =>
      client.send(
        new CreateMultipartUploadCommand({
          Bucket: to.bucket,
          Key: to.key,
          ContentType: head.ContentType,
          Metadata: head.Metadata,
        }),
        { abortSignal: signal },
      ),
    retryContext("copy (create multipart upload)", toUri, options),
  );
  const uploadId = created.UploadId;
  if (!uploadId)
    throw new StorageFailedError("copy (create multipart upload)", toUri, new Error("no UploadId"));
  try {
    const etags = new Map<number, string>();
    await runBounded(
      planCopyParts(bytes, options.partSize ?? COPY_PART_SIZE),
      options.concurrency ?? 4,
      async (part, poolSignal) => {
        const answer = await withRetry(
          () =>
            client.send(
              new UploadPartCopyCommand({
                Bucket: to.bucket,
                Key: to.key,
                UploadId: uploadId,
                PartNumber: part.partNumber,
                CopySource: copySource(from),
                CopySourceRange: part.range,
                CopySourceIfMatch: ifMatch,
              }),
              { abortSignal: signal },
            ),
          retryContext(`copy part ${part.partNumber}`, toUri, { ...options, signal: poolSignal }),
        );
        const etag = answer.CopyPartResult?.ETag;
        if (!etag) throw new StorageFailedError(`copy part ${part.partNumber}`, toUri, new Error("no ETag"));
        etags.set(part.partNumber, etag);
      },
      signal,
    );
    const parts = [...etags].sort(([a], [b]) => a - b).map(([PartNumber, ETag]) => ({ PartNumber, ETag }));
    const answer = await withRetry(
      () =>
        client.send(
          new CompleteMultipartUploadCommand({
            Bucket: to.bucket,
            Key: to.key,
            UploadId: uploadId,
            MultipartUpload: { Parts: parts },
          }),
          { abortSignal: signal },
        ),
      retryContext("copy (complete multipart upload)", toUri, options),
    );
    return answer.ETag;
  } catch (error) {
    // Unlike an upload, a copy has nothing local to resume from: drop the parts.
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: to.bucket, Key: to.key, UploadId: uploadId }))
      .catch((abortError: unknown) =>
        (options.logger ?? silentLogger).warn("could not abort the multipart copy", {
          uri: toUri,
          uploadId,
          error: abortError,
        }),
      );
    throw error;
  }
}
