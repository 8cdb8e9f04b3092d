/**
 * Downloads an object to a local file: streamed into a temp file beside the destination, then
 * renamed, so the destination is either absent or complete. A recoverable failure, also one
 * in the middle of the body, starts the download again from the first byte.
 */
import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import {
  type RetryOptions,
  retryContext,
  StorageFailedError,
  splitS3Uri,
  toStorageError,
  withRetry,
} from "@tjm/storage";

export interface DownloadOptions extends RetryOptions {
  /** Bytes written so far in this attempt, and the object's size when the store sent it. */
  onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
}

export interface DownloadResult {
  bytes: number;
  /** Of the bytes written, lowercase hex. */
  sha256: string;
  etag: string | undefined;
}

/**
 * Rejects with InputNotFoundError when there is no such key, StorageRefusedError (access,
 * missing bucket), StorageUnavailableError once the retry budget is spent.
 */
export async function downloadObject(
  client: S3Client,
  uri: string,
  destination: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const { bucket, key } = splitS3Uri(uri);
  const { signal } = options;
  const temp = `${destination}.${randomBytes(6).toString("hex")}.download`;
  try {
    await mkdir(dirname(destination), { recursive: true });
    const result = await withRetry(
      async () => {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), {
          abortSignal: signal,
        });
        if (!answer.Body) throw new StorageFailedError("download", uri, new Error("the answer has no body"));
        // Node's HTTP handler gives a Readable; a fetch-based one a web stream.
        const body =
          answer.Body instanceof Readable
            ? answer.Body
            : Readable.fromWeb(answer.Body.transformToWebStream() as WebReadableStream);
        const total = answer.ContentLength;
        const hash = createHash("sha256");
        let bytes = 0;
        const count = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            hash.update(chunk);
            bytes += chunk.length;
            options.onProgress?.(bytes, total);
            done(null, chunk);
          },
        });
        await pipeline(body, count, createWriteStream(temp), signal ? { signal } : {});
        if (total !== undefined && bytes !== total) {
          // Treated like a dropped connection: retried.
          throw Object.assign(new Error(`the body ended after ${bytes} of ${total} bytes`), {
            code: "ERR_STREAM_PREMATURE_CLOSE",
          });
        }
        return { bytes, sha256: hash.digest("hex"), etag: answer.ETag };
      },
      retryContext("download", uri, options),
    );
    await rename(temp, destination);
    return result;
  } catch (error) {
    await rm(temp, { force: true });
    throw toStorageError(error, "download", uri, signal);
  }
}
