/**
 * Uploading an output while ffmpeg writes it: a multipart upload begins when ffmpeg starts,
 * parts 2… go up as the file grows past their end (growing-parts.ts), and when ffmpeg has
 * exited every part sent is read again from the final file and dropped if its bytes changed.
 * What remains is written as an ordinary upload state (upload-state.ts) for MultipartUploader,
 * which sends part 1, the tail and every dropped part, and completes the upload: so a muxer
 * that rewrites its header at the end is safe, and the pause/resume loop after the encode
 * stays the only place storage trouble is waited out.
 *
 * Nothing here fails the encode: a store that cannot be reached leaves the parts to the
 * upload after the exit. Until finish() the state is marked `growing`, so it is only ever
 * aborted (MultipartUploader.abort), never resumed.
 */
import { createHash } from "node:crypto";
import { open, stat } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { CreateMultipartUploadCommand, type S3Client, UploadPartCommand } from "@aws-sdk/client-s3";
import { type Logger, silentLogger } from "@tjm/platform";
import {
  MAX_PARTS,
  type PartRange,
  type RetryOptions,
  retryContext,
  type S3Location,
  splitS3Uri,
  withRetry,
} from "@tjm/storage";
import { partStillInFile, readyParts } from "./growing-parts.ts";
import { readRange } from "./local-file.ts";
import type { UploadMeter } from "./upload.ts";
import { type UploadState, writeUploadState } from "./upload-state.ts";

export interface GrowingUploadOptions extends RetryOptions {
  client: S3Client;
  /** Sends the requests that carry a body (UploadPart); `client` when unset. */
  bodyClient?: S3Client | undefined;
  logger?: Logger;
  /** The file ffmpeg is writing; it need not exist yet. */
  file: string;
  /** The destination, `s3://bucket/key`. */
  uri: string;
  /** The state file MultipartUploader resumes afterwards. */
  statePath: string;
  partSize: number;
  /** The store's parts per upload (S3: 10,000). */
  partLimit?: number;
  /** Parts in flight at once. */
  concurrency: number;
  /** How often the file's size is read while it grows; default 100 ms. */
  pollMs?: number;
  meter?: UploadMeter | undefined;
  /** Called when the store has a part, with its number (tests watch the upload with it). */
  onPartStored?: (partNumber: number) => void;
}

export interface StreamedSummary {
  /** Parts stored while the file grew and still equal to the final file's bytes. */
  partsKept: number;
  /** Parts stored while the file grew whose bytes the writer changed afterwards: sent again. */
  partsChanged: number;
}

const DEFAULT_POLL_MS = 100;

export class GrowingFileUpload {
  private readonly location: S3Location;
  private readonly stopFollowing = new AbortController();
  private readonly stopSending = new AbortController();
  /** Ends the follow loop: finish() and stop(). */
  private readonly followSignal: AbortSignal;
  /** Aborts the requests in flight: stop() only, finish() lets them end. */
  private readonly signal: AbortSignal;
  private readonly following: Promise<void>;
  private readonly inFlight = new Set<Promise<void>>();
  /** Part number -> SHA-256 of the bytes the store holds for it. */
  private readonly sent = new Map<number, string>();
  private readonly taken = new Set<number>();
  private state: UploadState | undefined;
  private storageTrouble = false;
  private lastWrite: Promise<void> = Promise.resolve();

  /** Starts following the file at once. */
  constructor(private readonly options: GrowingUploadOptions) {
    this.location = splitS3Uri(options.uri);
    this.signal = AbortSignal.any([this.stopSending.signal, ...(options.signal ? [options.signal] : [])]);
    this.followSignal = AbortSignal.any([this.signal, this.stopFollowing.signal]);
    this.following = this.follow();
  }

  private get logger(): Logger {
    return this.options.logger ?? silentLogger;
  }

  /**
   * The writer exited and the file is final: waits for the parts in flight, drops every part
   * whose bytes changed, and leaves the state for MultipartUploader with the file's final size
   * and mtime.
   */
  async finish(): Promise<StreamedSummary> {
    await this.halt();
    const state = this.state;
    if (!state) return { partsKept: 0, partsChanged: 0 };
    const info = await stat(this.options.file);
    const kept: UploadState["parts"] = [];
    const handle = await open(this.options.file, "r");
    try {
      for (const part of state.parts) {
        if (!partStillInFile(part.PartNumber, state.partSize, info.size)) continue;
        const bytes = await readRange(handle, (part.PartNumber - 1) * state.partSize, state.partSize);
        if (sha256(bytes) === this.sent.get(part.PartNumber)) kept.push(part);
      }
    } finally {
      await handle.close();
    }
    await this.persist({
      version: 1,
      uploadId: state.uploadId,
      bucket: state.bucket,
      key: state.key,
      fileSize: info.size,
      fileMtimeMs: info.mtimeMs,
      partSize: state.partSize,
      parts: kept,
    });
    const summary = { partsKept: kept.length, partsChanged: state.parts.length - kept.length };
    this.logger.info("parts uploaded while the output was written", {
      uri: this.options.uri,
      uploadId: state.uploadId,
      ...summary,
    });
    return summary;
  }

  /**
   * The file is abandoned (ffmpeg failed, the attempt ends, the agent stops): sending stops;
   * the state stays, for MultipartUploader.abort() to abort the upload in the store.
   */
  async stop(): Promise<void> {
    this.stopSending.abort();
    await this.halt();
  }

  private async halt(): Promise<void> {
    this.stopFollowing.abort();
    await this.following;
    await Promise.all(this.inFlight);
    await this.lastWrite;
  }

  private async follow(): Promise<void> {
    const { partSize, concurrency } = this.options;
    const partLimit = this.options.partLimit ?? MAX_PARTS;
    try {
      this.state = await this.create();
    } catch (error) {
      if (!this.followSignal.aborted) {
        this.logger.warn("cannot begin the upload while the output is written; it goes up after the encode", {
          uri: this.options.uri,
          error,
        });
      }
      return;
    }
    while (!this.followSignal.aborted && !this.storageTrouble) {
      const written = await stat(this.options.file).then(
        (info) => info.size,
        () => 0,
      );
      const room = concurrency - this.inFlight.size;
      for (const part of readyParts(written, partSize, this.taken, partLimit).slice(0, Math.max(0, room))) {
        this.taken.add(part.partNumber);
        const sending = this.send(part).finally(() => this.inFlight.delete(sending));
        this.inFlight.add(sending);
      }
      await delay(this.options.pollMs ?? DEFAULT_POLL_MS, undefined, { signal: this.followSignal }).catch(
        () => {},
      );
    }
  }

  /** Given up when the writer exits first: the upload after the exit creates its own. */
  private async create(): Promise<UploadState> {
    const { bucket, key } = this.location;
    const created = await withRetry(
      () =>
        this.options.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }), {
          abortSignal: this.followSignal,
        }),
      retryContext("create multipart upload", this.options.uri, {
        ...this.options,
        signal: this.followSignal,
      }),
    );
    if (!created.UploadId) throw new Error("the store answered without an UploadId");
    const state: UploadState = {
      version: 1,
      growing: true,
      uploadId: created.UploadId,
      bucket,
      key,
      fileSize: 0,
      fileMtimeMs: 0,
      partSize: this.options.partSize,
      parts: [],
    };
    await this.persist(state);
    return state;
  }

  /** One part; a failure is left to the upload after the exit, and no further part starts. */
  private async send(part: PartRange): Promise<void> {
    const state = this.state as UploadState;
    try {
      const handle = await open(this.options.file, "r");
      const body = await readRange(handle, part.offset, part.length).finally(() => handle.close());
      const answer = await withRetry(
        () =>
          (this.options.bodyClient ?? this.options.client).send(
            new UploadPartCommand({
              Bucket: state.bucket,
              Key: state.key,
              UploadId: state.uploadId,
              PartNumber: part.partNumber,
              Body: body,
              ContentLength: part.length,
            }),
            { abortSignal: this.signal },
          ),
        retryContext(`upload part ${part.partNumber}`, this.options.uri, {
          ...this.options,
          signal: this.signal,
        }),
      );
      if (!answer.ETag) throw new Error("the store answered without an ETag");
      this.sent.set(part.partNumber, sha256(body));
      state.parts = [...state.parts, { PartNumber: part.partNumber, ETag: answer.ETag }].sort(
        (a, b) => a.PartNumber - b.PartNumber,
      );
      state.fileSize = Math.max(state.fileSize, part.offset + part.length);
      await this.persist(state);
      this.options.meter?.partUploaded(part.length);
      this.options.onPartStored?.(part.partNumber);
    } catch (error) {
      if (this.signal.aborted) return;
      this.storageTrouble = true;
      this.logger.warn("a part failed while the output was written; the rest goes up after the encode", {
        uri: this.options.uri,
        partNumber: part.partNumber,
        error,
      });
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

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
