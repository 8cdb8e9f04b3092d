/**
 * Commit without a copy: a Worker uploads an output as a multipart upload at its destination
 * key and leaves it incomplete; the Manager, after the fencing check, completes it with the
 * part list of the completed report. Before completing it aborts every other upload in
 * progress at that key (a zombie attempt's), so no other attempt's parts can become the
 * object. A commit whose answer was lost (a retry, or a Manager that died before recording
 * it) is recognised afterwards: the upload is gone and the object's ETag is the multipart ETag
 * of exactly the reported parts.
 *
 * Needs ListParts, ListMultipartUploads and AbortMultipartUpload (AWS S3, MinIO, Swift
 * s3api); s3rver has none of them and keeps the staging copy (copy.ts).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { classifyStorageError, toStorageError } from "./errors.ts";
import { multipartEtag } from "./parts.ts";
import { type RetryOptions, retryContext, withRetry } from "./retry.ts";
import { type S3Location, splitS3Uri } from "./uri.ts";

export interface ReportedPart {
  partNumber: number;
  /** As the store answered UploadPart, quotes included. */
  etag: string;
  bytes: number;
}

/** An incomplete multipart upload at its destination, as the attempt's completed report describes it. */
export interface ReportedUpload {
  uri: string;
  uploadId: string;
  parts: readonly ReportedPart[];
  /** The output's size in the report: its parts must add up to it. */
  bytes: number;
}

export interface CommitResult {
  /** As the store answered, quotes included. */
  etag: string | undefined;
  /** The upload was already complete (an earlier commit's answer or record was lost). */
  recognised: boolean;
  /** Other attempts' uploads aborted at the key. */
  abortedUploads: number;
}

/** The reported upload is not what the store holds; nothing about it will change on a retry. */
export class CommitMismatchError extends Error {
  override readonly name = "CommitMismatchError";
  constructor(
    readonly uri: string,
    reason: string,
  ) {
    super(`${uri}: ${reason}`);
  }
}

/** S3 answers these when the part list names a part it does not hold, or holds too small. */
const PART_LIST_REFUSED = new Set(["InvalidPart", "InvalidPartOrder", "EntityTooSmall"]);

export async function commitMultipartUpload(
  client: S3Client,
  upload: ReportedUpload,
  options: RetryOptions = {},
): Promise<CommitResult> {
  checkPartList(upload);
  const location = splitS3Uri(upload.uri);
  const store = new Store(client, location, upload.uri, options);
  const stored = await store.parts(upload.uploadId);
  if (stored === "gone") return { ...(await recognise(store, upload)), abortedUploads: 0 };
  for (const part of upload.parts) {
    const held = stored.get(part.partNumber);
    if (held?.etag !== part.etag || held.bytes !== part.bytes) {
      throw new CommitMismatchError(
        upload.uri,
        `part ${part.partNumber} was reported as ${part.bytes} bytes with ETag ${part.etag}, but the upload holds ${held ? `${held.bytes} bytes with ETag ${held.etag}` : "no such part"}`,
      );
    }
  }
  let abortedUploads = 0;
  for (const other of await store.uploadsAtKey()) {
    if (other === upload.uploadId) continue;
    await store.abort(other);
    abortedUploads++;
  }
  const completed = await store.complete(upload);
  if (completed === "gone") return { ...(await recognise(store, upload)), abortedUploads };
  return { etag: completed, recognised: false, abortedUploads };
}

/**
 * Aborts one multipart upload; one already gone (completed, aborted, expired) is no error.
 * The Manager discards a cancelled attempt's reported upload with it.
 */
export async function abortMultipartUpload(
  client: S3Client,
  uri: string,
  uploadId: string,
  options: RetryOptions = {},
): Promise<void> {
  await new Store(client, splitS3Uri(uri), uri, options).abort(uploadId);
}

/** The parts are numbered in ascending order and add up to the reported size (pure). */
function checkPartList(upload: ReportedUpload): void {
  let total = 0;
  let previous = 0;
  for (const part of upload.parts) {
    if (part.partNumber <= previous) {
      throw new CommitMismatchError(upload.uri, `part ${part.partNumber} is out of order in the part list`);
    }
    previous = part.partNumber;
    total += part.bytes;
  }
  if (upload.parts.length === 0 || total !== upload.bytes) {
    throw new CommitMismatchError(
      upload.uri,
      `the reported parts add up to ${total} bytes where the output has ${upload.bytes}`,
    );
  }
}

/** The upload is gone: committed already when the object is exactly the reported parts. */
async function recognise(
  store: Store,
  upload: ReportedUpload,
): Promise<Omit<CommitResult, "abortedUploads">> {
  const expected = multipartEtag(upload.parts.map((part) => part.etag));
  if (expected === undefined) {
    throw new CommitMismatchError(
      upload.uri,
      `upload ${upload.uploadId} is gone and its parts' ETags are not MD5s, so the object cannot be recognised as its commit`,
    );
  }
  const head = await store.head();
  if (head?.ETag === expected && head.ContentLength === upload.bytes)
    return { etag: expected, recognised: true };
  throw new CommitMismatchError(
    upload.uri,
    head
      ? `upload ${upload.uploadId} is gone and the object (${head.ContentLength} bytes, ETag ${head.ETag}) is not its commit (${upload.bytes} bytes, ETag ${expected})`
      : `upload ${upload.uploadId} is gone and there is no object`,
  );
}

/** The requests of a commit, each retried and its errors mapped as every storage call's. */
class Store {
  constructor(
    private readonly client: S3Client,
    private readonly location: S3Location,
    private readonly uri: string,
    private readonly options: RetryOptions,
  ) {}

  private async request<T>(
    operation: string,
    send: (signal: AbortSignal | undefined) => Promise<T>,
  ): Promise<T> {
    try {
      return await withRetry(
        () => send(this.options.signal),
        retryContext(operation, this.uri, this.options),
      );
    } catch (error) {
      throw toStorageError(error, operation, this.uri, this.options.signal);
    }
  }

  /** Every part the upload holds (ListParts pages at 1,000), or "gone". */
  async parts(uploadId: string): Promise<Map<number, { etag: string; bytes: number }> | "gone"> {
    const stored = new Map<number, { etag: string; bytes: number }>();
    let marker: string | undefined;
    try {
      do {
        const page = await withRetry(
          () =>
            this.client.send(
              new ListPartsCommand({
                Bucket: this.location.bucket,
                Key: this.location.key,
                UploadId: uploadId,
                PartNumberMarker: marker,
              }),
              { abortSignal: this.options.signal },
            ),
          retryContext("list parts", this.uri, this.options),
        );
        for (const part of page.Parts ?? []) {
          if (part.PartNumber !== undefined && part.ETag && part.Size !== undefined) {
            stored.set(part.PartNumber, { etag: part.ETag, bytes: part.Size });
          }
        }
        marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
      } while (marker);
    } catch (error) {
      if (classifyStorageError(error) === "no-such-upload") return "gone";
      throw toStorageError(error, "list parts", this.uri, this.options.signal);
    }
    return stored;
  }

  /** The ids of the uploads in progress at exactly this key (the listing is by prefix). */
  async uploadsAtKey(): Promise<string[]> {
    const { bucket, key } = this.location;
    const ids: string[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.request("list multipart uploads", (signal) =>
        this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: bucket,
            Prefix: key,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
          { abortSignal: signal },
        ),
      );
      for (const upload of page.Uploads ?? []) {
        if (upload.Key === key && upload.UploadId) ids.push(upload.UploadId);
      }
      if (!page.IsTruncated) return ids;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  async abort(uploadId: string): Promise<void> {
    const { bucket, key } = this.location;
    try {
      await withRetry(
        () =>
          this.client.send(
            new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }),
            {
              abortSignal: this.options.signal,
            },
          ),
        retryContext("abort multipart upload", this.uri, this.options),
      );
    } catch (error) {
      if (classifyStorageError(error) === "no-such-upload") return;
      throw toStorageError(error, "abort multipart upload", this.uri, this.options.signal);
    }
  }

  /** The new object's ETag, or "gone" when the upload no longer exists (an earlier try completed it). */
  async complete(upload: ReportedUpload): Promise<string | undefined | "gone"> {
    const { bucket, key } = this.location;
    try {
      const answer = await withRetry(
        () =>
          this.client.send(
            new CompleteMultipartUploadCommand({
              Bucket: bucket,
              Key: key,
              UploadId: upload.uploadId,
              MultipartUpload: {
                Parts: upload.parts.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })),
              },
            }),
            { abortSignal: this.options.signal },
          ),
        retryContext("complete multipart upload", this.uri, this.options),
      );
      return answer.ETag;
    } catch (error) {
      if (classifyStorageError(error) === "no-such-upload") return "gone";
      const name = (error as { name?: unknown }).name;
      if (typeof name === "string" && PART_LIST_REFUSED.has(name)) {
        throw new CommitMismatchError(upload.uri, `the store refused the reported part list (${name})`);
      }
      throw toStorageError(error, "complete multipart upload", this.uri, this.options.signal);
    }
  }

  /** The object at the key, or undefined when there is none. */
  async head(): Promise<HeadObjectCommandOutput | undefined> {
    const { bucket, key } = this.location;
    try {
      return await withRetry(
        () =>
          this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), {
            abortSignal: this.options.signal,
          }),
        retryContext("head", this.uri, this.options),
      );
    } catch (error) {
      if (classifyStorageError(error) === "no-such-key") return undefined;
      throw toStorageError(error, "head", this.uri, this.options.signal);
    }
  }
}
