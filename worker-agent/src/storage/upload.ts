/**
 * Resumable multipart upload of one local file to one s3:// URI, on plain client-s3
 * commands: lib-storage's Upload can neither continue an existing UploadId nor skip the parts
 * S3 already holds. The state file (upload-state.ts) is rewritten after every part, so an
 * upload interrupted by an outage, a crash or a restart sends only the parts still missing.
 * With `complete: false` the upload is left incomplete and its parts are returned: the Manager
 * completes it (a multipart commit).
 */
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListPartsCommand,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { type Logger, silentLogger } from "@tjm/platform";
import {
  classifyStorageError,
  formatS3Uri,
  multipartEtag,
  type PartRange,
  planParts,
  type RetryContext,
  type RetryOptions,
  retryContext,
  runBounded,
  type S3Location,
  StorageFailedError,
  splitS3Uri,
  toStorageError,
  withRetry,
} from "@tjm/storage";
import { assertUnchanged, readRange, sha256OfFile } from "./local-file.ts";
import { choosePartSize, missingParts } from "./parts.ts";
import {
  type CompletedPart,
  readUploadState,
  removeUploadState,
  stateMismatch,
  type UploadState,
  writeUploadState,
} from "./upload-state.ts";

export interface UploadProgress {
  uploadedBytes: number;
  totalBytes: number;
}

/** What the uploader counts (WorkerMetrics implements it). */
export interface UploadMeter {
  partUploaded(bytes: number): void;
  retried(operation: "upload_part" | "complete_upload"): void;
}

export interface UploadOptions extends RetryOptions {
  client: S3Client;
  /** Sends the requests that carry a body (UploadPart); `client` when unset. */
  bodyClient?: S3Client | undefined;
  /** The uploader also logs how it resumes, at info. */
  logger?: Logger;
  file: string;
  /** The destination, `s3://bucket/key`. */
  uri: string;
  /** The state file; one per upload, kept by the caller (for example in the attempt's directory). */
  statePath: string;
  /** Bytes per part; default 32 MiB, at least 5 MiB. A resumed upload keeps the size it began with. */
  partSize?: number;
  /** Parts the store allows per upload (S3: 10,000; Swift's s3api: 1,000); the part size grows to fit. */
  partLimit?: number;
  /** Parts in flight at once; default 4. */
  concurrency?: number;
  /**
   * False: the upload is left incomplete and the result lists its parts, for the Manager to
   * complete; the state file stays, so a retry returns the same upload. Default true.
   */
  complete?: boolean;
  contentType?: string;
  /** Called after each stored part (and once at the start with what a resume already holds). */
  onProgress?: (progress: UploadProgress) => void;
  meter?: UploadMeter | undefined;
}

export interface UploadResult {
  bytes: number;
  /** Of the local file, lowercase hex. */
  sha256: string;
  /** As the store returned it, quotes included. */
  etag: string | undefined;
  /** Parts this call sent, and parts a previous call had already stored. */
  partsSent: number;
  partsResumed: number;
  /** With `complete: false`: the upload left incomplete, and its parts in part order. */
  incomplete?: IncompleteUpload;
}

export interface IncompleteUpload {
  uploadId: string;
  parts: { partNumber: number; etag: string; bytes: number }[];
}

/**
 * 4 parts in flight: with 32 MiB parts, 146 MiB/s to Swift against 130 with 2 and 152 with 8
 * (bench/upload.ts); 8 would hold twice the memory (8 × part size) for 4 % more.
 */
export const DEFAULT_UPLOAD_CONCURRENCY = 4;

export class MultipartUploader {
  private readonly location: S3Location;
  private readonly concurrency: number;
  private running: Promise<UploadResult> | undefined;
  private stopRunning: AbortController | undefined;
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(private readonly options: UploadOptions) {
    this.location = splitS3Uri(options.uri);
    if (options.partSize !== undefined) choosePartSize(0, options.partSize, options.partLimit);
    this.concurrency = options.concurrency ?? DEFAULT_UPLOAD_CONCURRENCY;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${this.concurrency}`);
    }
  }

  /**
   * Uploads the file, continuing the upload in the state file when it is for this key and this
   * version of the file. Rejects with StorageUnavailableError (state kept: call again later),
   * StorageRefusedError (credentials, policy, missing bucket), or StorageFailedError.
   */
  upload(): Promise<UploadResult> {
    if (this.running) return Promise.reject(new Error(`an upload to ${this.options.uri} is already running`));
    const controller = new AbortController();
    this.stopRunning = controller;
    const signal = this.options.signal
      ? AbortSignal.any([this.options.signal, controller.signal])
      : controller.signal;
    const run = this.run(signal).finally(() => {
      this.running = undefined;
      this.stopRunning = undefined;
    });
    this.running = run;
    return run;
  }

  /**
   * Stops a running upload, aborts the multipart upload in the store and removes the state
   * file. If the store cannot be reached the state file stays, so abort() can be tried again.
   */
  async abort(): Promise<void> {
    if (this.running) {
      const reason = Object.assign(new Error(`upload to ${this.options.uri} was aborted`), {
        name: "AbortError",
      });
      this.stopRunning?.abort(reason);
      await this.running.catch(() => {});
    }
    const saved = await readUploadState(this.options.statePath);
    if (saved.status === "ok") await this.abortInStore(saved.state, this.options.signal);
    await removeUploadState(this.options.statePath);
  }

  private context(operation: string, signal: AbortSignal): RetryContext {
    return retryContext(operation, this.options.uri, { ...this.options, signal });
  }

  private get logger() {
    return this.options.logger ?? silentLogger;
  }

  private async run(signal: AbortSignal): Promise<UploadResult> {
    const { file, statePath } = this.options;
    const stopHashing = new AbortController();
    let hashing: Promise<string> | undefined;
    try {
      const info = await stat(file);
      hashing = sha256OfFile(file, AbortSignal.any([signal, stopHashing.signal]));
      hashing.catch(() => {});
      let state = await this.resumeOrCreate(info, signal);
      const partsResumed = state.parts.length;
      let partsSent = 0;
      let restarted = false;
      for (;;) {
        try {
          partsSent += await this.sendMissingParts(state, signal);
          await assertUnchanged(file, info);
          if (this.options.complete === false) {
            const sha256 = await hashing;
            await this.lastWrite;
            return {
              bytes: info.size,
              sha256,
              etag: undefined,
              partsSent,
              partsResumed,
              incomplete: incomplete(state),
            };
          }
          const etag = await this.complete(state, signal, partsResumed > 0);
          const sha256 = await hashing;
          await this.lastWrite;
          await removeUploadState(statePath);
          return { bytes: info.size, sha256, etag, partsSent, partsResumed };
        } catch (error) {
          if (restarted || signal.aborted || !uploadIsGone(error)) throw error;
          // The store no longer knows the upload (aborted, or expired by a lifecycle rule):
          // its parts are gone, so all of them go again, once.
          restarted = true;
          this.logger.warn("multipart upload is gone from the store; starting over", {
            uri: this.options.uri,
            uploadId: state.uploadId,
            error,
          });
          state = await this.create(info, signal);
        }
      }
    } catch (error) {
      stopHashing.abort();
      await hashing?.catch(() => {});
      throw toStorageError(error, "upload", this.options.uri, signal);
    }
  }

  private async resumeOrCreate(info: Stats, signal: AbortSignal): Promise<UploadState> {
    const saved = await readUploadState(this.options.statePath);
    if (saved.status === "corrupt") {
      this.logger.warn("upload state file is unreadable; starting a new upload", {
        statePath: this.options.statePath,
        reason: saved.reason,
      });
    } else if (saved.status === "ok") {
      const mismatch = stateMismatch(saved.state, this.location, info, this.options.partLimit);
      if (!mismatch) {
        const reconciled = await this.reconcile(saved.state, signal);
        if (reconciled) return reconciled;
        this.logger.warn("multipart upload is gone from the store; starting over", {
          uri: this.options.uri,
          uploadId: saved.state.uploadId,
        });
        return this.create(info, signal);
      }
      this.logger.warn("upload state is stale; aborting that upload and starting over", {
        uri: this.options.uri,
        reason: mismatch,
      });
      await this.abortStale(saved.state, signal);
    }
    return this.create(info, signal);
  }

  /**
   * What the store really holds of a saved upload, from ListParts: a part the store kept but
   * the state missed (the process died between the store's answer and the state write) is
   * adopted when its ETag is the MD5 of the local bytes, so no part goes up twice; a part the
   * state lists but the store lacks is sent again. Undefined when the upload is gone. A store
   * without ListParts (s3rver: 405) leaves the state file as the record.
   */
  private async reconcile(state: UploadState, signal: AbortSignal): Promise<UploadState | undefined> {
    let stored: Map<number, { etag: string; size: number }>;
    try {
      stored = await this.listStoredParts(state, signal);
    } catch (error) {
      if (classifyStorageError(error) === "no-such-upload") return undefined;
      if (!unsupported(error)) throw error;
      this.logger.info("resuming multipart upload from the state file (the store has no ListParts)", {
        uri: this.options.uri,
        uploadId: state.uploadId,
        partsStored: state.parts.length,
      });
      return state;
    }
    const recorded = new Map(state.parts.map((part) => [part.PartNumber, part.ETag]));
    const parts: CompletedPart[] = [];
    let adopted = 0;
    const handle = await open(this.options.file, "r");
    try {
      for (const planned of planParts(state.fileSize, state.partSize)) {
        const found = stored.get(planned.partNumber);
        if (!found || found.size !== planned.length) continue;
        if (recorded.get(planned.partNumber) === found.etag) {
          parts.push({ PartNumber: planned.partNumber, ETag: found.etag });
          continue;
        }
        const local = await readRange(handle, planned.offset, planned.length);
        if (found.etag === `"${createHash("md5").update(local).digest("hex")}"`) {
          parts.push({ PartNumber: planned.partNumber, ETag: found.etag });
          adopted++;
        }
      }
    } finally {
      await handle.close();
    }
    const kept = new Set(parts.map((part) => part.PartNumber));
    const lost = state.parts.filter((part) => !kept.has(part.PartNumber));
    this.logger.info("resuming multipart upload", {
      uri: this.options.uri,
      uploadId: state.uploadId,
      partsStored: parts.length,
      partsAdopted: adopted,
      partsLost: lost.length,
    });
    const next = { ...state, parts };
    await this.persist(next);
    return next;
  }

  /** Every part ListParts shows for the upload (it pages at 1,000). */
  private async listStoredParts(
    state: UploadState,
    signal: AbortSignal,
  ): Promise<Map<number, { etag: string; size: number }>> {
    const stored = new Map<number, { etag: string; size: number }>();
    let marker: string | undefined;
    do {
      const page = await withRetry(
        () =>
          this.options.client.send(
            new ListPartsCommand({ ...multipartUpload(state), PartNumberMarker: marker }),
            { abortSignal: signal },
          ),
        this.context("list parts", signal),
      );
      for (const part of page.Parts ?? []) {
        if (part.PartNumber !== undefined && part.ETag && part.Size !== undefined) {
          stored.set(part.PartNumber, { etag: part.ETag, size: part.Size });
        }
      }
      marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
    } while (marker);
    return stored;
  }

  private async create(info: Stats, signal: AbortSignal): Promise<UploadState> {
    const partSize = choosePartSize(info.size, this.options.partSize, this.options.partLimit);
    const { bucket, key } = this.location;
    // A retry after a lost answer leaves an orphan upload; the bucket's lifecycle rule for
    // incomplete multipart uploads removes it.
    const created = await withRetry(
      () =>
        this.options.client.send(
          new CreateMultipartUploadCommand({
            Bucket: bucket,
            Key: key,
            ContentType: this.options.contentType,
          }),
          { abortSignal: signal },
        ),
      this.context("create multipart upload", signal),
    );
    if (!created.UploadId) {
      throw new StorageFailedError("create multipart upload", this.options.uri, new Error("no UploadId"));
    }
    const state: UploadState = {
      version: 1,
      uploadId: created.UploadId,
      bucket,
      key,
      fileSize: info.size,
      fileMtimeMs: info.mtimeMs,
      partSize,
      parts: [],
    };
    await this.persist(state);
    return state;
  }

  /** Sends the parts the state does not hold yet; returns how many it sent. */
  private async sendMissingParts(state: UploadState, signal: AbortSignal): Promise<number> {
    const plan = planParts(state.fileSize, state.partSize);
    const todo = missingParts(
      plan,
      state.parts.map((part) => part.PartNumber),
    );
    let uploadedBytes = state.fileSize - todo.reduce((sum, part) => sum + part.length, 0);
    this.options.onProgress?.({ uploadedBytes, totalBytes: state.fileSize });
    if (todo.length === 0) return 0;
    let sent = 0;
    const handle = await open(this.options.file, "r");
    try {
      await runBounded(
        todo,
        this.concurrency,
        async (part, poolSignal) => {
          const completed = await this.sendPart(handle, state, part, signal, poolSignal);
          state.parts = [...state.parts, completed].sort((a, b) => a.PartNumber - b.PartNumber);
          await this.persist(state);
          sent++;
          uploadedBytes += part.length;
          this.options.meter?.partUploaded(part.length);
          this.options.onProgress?.({ uploadedBytes, totalBytes: state.fileSize });
        },
        signal,
      );
    } finally {
      await handle.close();
    }
    return sent;
  }

  private async sendPart(
    handle: FileHandle,
    state: UploadState,
    part: PartRange,
    signal: AbortSignal,
    poolSignal: AbortSignal,
  ): Promise<CompletedPart> {
    // A Buffer body (not a stream) can be sent again as it is, and never triggers the SDK's
    // aws-chunked encoding whatever the checksum setting. The SDK signs its SHA-256
    // (x-amz-content-sha256, over HTTP and HTTPS alike), so the store refuses a part damaged in
    // transit (BadDigest or XAmzContentSHA256Mismatch, retried); a Content-MD5 on top cost a
    // tenth of the throughput on 2 cores and caught nothing more (bench/upload.ts).
    const body = await readRange(handle, part.offset, part.length);
    const answer = await withRetry(
      (attempt) => {
        if (attempt > 1) this.options.meter?.retried("upload_part");
        return (this.options.bodyClient ?? this.options.client).send(
          new UploadPartCommand({
            ...multipartUpload(state),
            PartNumber: part.partNumber,
            Body: body,
            ContentLength: part.length,
          }),
          { abortSignal: signal },
        );
      },
      this.context(`upload part ${part.partNumber}`, poolSignal),
    );
    if (!answer.ETag) {
      throw new StorageFailedError(`upload part ${part.partNumber}`, this.options.uri, new Error("no ETag"));
    }
    return { PartNumber: part.partNumber, ETag: answer.ETag };
  }

  /** `resumed`: the state came from the file, so an earlier pass may have completed the upload. */
  private async complete(
    state: UploadState,
    signal: AbortSignal,
    resumed: boolean,
  ): Promise<string | undefined> {
    const { client } = this.options;
    const parts = [...state.parts].sort((a, b) => a.PartNumber - b.PartNumber);
    let attempts = 0;
    return withRetry(
      async () => {
        attempts++;
        if (attempts > 1) this.options.meter?.retried("complete_upload");
        try {
          const answer = await client.send(
            new CompleteMultipartUploadCommand({
              ...multipartUpload(state),
              MultipartUpload: { Parts: parts },
            }),
            { abortSignal: signal },
          );
          return answer.ETag;
        } catch (error) {
          // An earlier request (an attempt of this completion, or of an earlier pass that left
          // this state: a pause after the store completed it and only its answer was lost) may
          // have completed the upload. S3 then says the upload is gone; s3rver answers 500.
          const kind = classifyStorageError(error);
          const earlier = attempts > 1 || resumed;
          if (!earlier || (kind !== "no-such-upload" && kind !== "recoverable")) throw error;
          const etag = await this.completedBefore(state, parts, signal);
          if (etag === undefined) throw error;
          return etag;
        }
      },
      this.context("complete multipart upload", signal),
    );
  }

  private async completedBefore(
    state: UploadState,
    parts: CompletedPart[],
    signal: AbortSignal,
  ): Promise<string | undefined> {
    let head: { ContentLength?: number | undefined; ETag?: string | undefined };
    try {
      head = await this.options.client.send(new HeadObjectCommand({ Bucket: state.bucket, Key: state.key }), {
        abortSignal: signal,
      });
    } catch (error) {
      if (classifyStorageError(error) === "no-such-key") return undefined;
      throw error;
    }
    if (head.ContentLength !== state.fileSize || !head.ETag) return undefined;
    const expected = multipartEtag(parts.map((part) => part.ETag));
    if (expected && head.ETag.endsWith(`-${parts.length}"`) && head.ETag !== expected) return undefined;
    return head.ETag;
  }

  private async abortStale(state: UploadState, signal: AbortSignal): Promise<void> {
    try {
      await this.abortInStore(state, signal);
    } catch (error) {
      // Store unreachable: keep the state, so the next try aborts that upload first.
      if (signal.aborted || classifyStorageError(error) === "recoverable") throw error;
      // Refused or failed: the new upload does not depend on it, and the bucket's lifecycle
      // rule removes an incomplete upload left behind.
      this.logger.warn("could not abort the stale multipart upload; starting over anyway", {
        uri: formatS3Uri(state),
        uploadId: state.uploadId,
        error,
      });
    }
    await removeUploadState(this.options.statePath);
  }

  private async abortInStore(state: UploadState, signal: AbortSignal | undefined): Promise<void> {
    const uri = formatS3Uri(state);
    try {
      await withRetry(
        () =>
          this.options.client.send(new AbortMultipartUploadCommand(multipartUpload(state)), {
            abortSignal: signal,
          }),
        retryContext("abort multipart upload", uri, { ...this.options, signal }),
      );
    } catch (error) {
      if (classifyStorageError(error) === "no-such-upload") return;
      if (unsupported(error)) {
        // s3rver answers 405: it has no AbortMultipartUpload. Its parts stay on its disk.
        this.logger.warn("the store does not support AbortMultipartUpload; its parts are left behind", {
          uri,
          uploadId: state.uploadId,
          status: httpStatus(error),
        });
        return;
      }
      throw toStorageError(error, "abort multipart upload", uri, signal);
    }
  }

  /** Queues a write of the state as it is now; writes run one at a time, in order. */
  private persist(state: UploadState): Promise<void> {
    const snapshot: UploadState = { ...state, parts: [...state.parts] };
    const write = this.lastWrite.then(() => writeUploadState(this.options.statePath, snapshot));
    this.lastWrite = write.catch(() => {});
    return write;
  }
}

/** The upload and its parts, each part's size from the plan its state was made with. */
function incomplete(state: UploadState): IncompleteUpload {
  const etags = new Map(state.parts.map((part) => [part.PartNumber, part.ETag]));
  return {
    uploadId: state.uploadId,
    parts: planParts(state.fileSize, state.partSize).map((part) => ({
      partNumber: part.partNumber,
      etag: etags.get(part.partNumber) as string,
      bytes: part.length,
    })),
  };
}

/** What names the multipart upload in each request about it. */
function multipartUpload(state: UploadState): { Bucket: string; Key: string; UploadId: string } {
  return { Bucket: state.bucket, Key: state.key, UploadId: state.uploadId };
}

/** 405 or 501: the store does not implement the operation (s3rver's ListParts and AbortMultipartUpload). */
function unsupported(error: unknown): boolean {
  const status = httpStatus(error);
  return status === 405 || status === 501;
}

function httpStatus(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

function uploadIsGone(error: unknown): boolean {
  // InvalidPart on completion: the store lost parts the state says it holds.
  return (
    classifyStorageError(error) === "no-such-upload" || (error as { name?: unknown }).name === "InvalidPart"
  );
}
