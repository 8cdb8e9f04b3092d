/**
 * Server-side copy of one object. CopyObject takes at most 5 GiB; a larger object is copied
 * as a multipart upload of UploadPartCopy ranges (512 MiB each), pinned to the source's ETag
 * so a source rewritten mid-copy fails the copy instead of mixing two versions.
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
import { silentLogger } from "../src/logger.ts";
import { classifyStorageError, InputNotFoundError, StorageFailedError, toStorageError } from "./errors.ts";
import { COPY_PART_SIZE, MAX_SINGLE_COPY_SIZE, planCopyParts } from "./parts.ts";
import { type RetryOptions, retryContext, withRetry } from "./retry.ts";
import { runBounded } from "./run-bounded.ts";
import { copySource, parseS3Uri, type S3Location } from "./s3.ts";

export interface CopyOptions extends RetryOptions {
  /** Objects larger than this are copied in parts; default (and S3's maximum) 5 GiB. */
  multipartThreshold?: number;
  /** Default 512 MiB. */
  partSize?: number;
  /** Part copies in flight; default 4. */
  concurrency?: number;
}

export interface CopyResult {
  bytes: number;
  etag: string | undefined;
  multipart: boolean;
}

export async function copyObject(
  client: S3Client,
  fromUri: string,
  toUri: string,
  options: CopyOptions = {},
): Promise<CopyResult> {
  const from = parseS3Uri(fromUri);
  const to = parseS3Uri(toUri);
  const { signal } = options;
  let head: HeadObjectCommandOutput;
  try {
    head = await withRetry(
      () =>
        client.send(new HeadObjectCommand({ Bucket: from.bucket, Key: from.key }), { abortSignal: signal }),
      retryContext("copy from", fromUri, options),
    );
  } catch (error) {
    throw toStorageError(error, "copy from", fromUri, signal);
  }
  const bytes = head.ContentLength ?? 0;
  try {
    if (bytes <= (options.multipartThreshold ?? MAX_SINGLE_COPY_SIZE)) {
      const answer = await withRetry(
        () =>
          client.send(
            new CopyObjectCommand({ Bucket: to.bucket, Key: to.key, CopySource: copySource(from) }),
            {
              abortSignal: signal,
            },
          ),
        retryContext("copy to", toUri, options),
      );
      return { bytes, etag: answer.CopyObjectResult?.ETag, multipart: false };
    }
    const etag = await copyInParts(client, from, to, { toUri, bytes, head }, options);
    return { bytes, etag, multipart: true };
  } catch (error) {
    // The source went away between the HEAD and the copy.
    if (!signal?.aborted && classifyStorageError(error) === "no-such-key")
      throw new InputNotFoundError(fromUri, error);
    throw toStorageError(error, "copy to", toUri, signal);
  }
}

async function copyInParts(
  client: S3Client,
  from: S3Location,
  to: S3Location,
  source: {
    toUri: string;
    bytes: number;
    head: { ETag?: string | undefined; ContentType?: string | undefined; Metadata?: Record<string, string> };
  },
  options: CopyOptions,
): Promise<string | undefined> {
  const { signal } = options;
  const { toUri, bytes, head } = source;
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
                CopySourceIfMatch: head.ETag,
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
