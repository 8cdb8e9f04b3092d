/**
 * How an attempt's outputs go up: each output's part size is fixed from its plan before
 * ffmpeg starts (part-size.ts); outputs ffmpeg writes front to back upload their parts while
 * it runs (growing-upload.ts), and every output's upload finishes after the exit through
 * MultipartUploader, all of its remaining parts in flight at once.
 */
import { access, readFile, stat } from "node:fs/promises";
import type { S3Client } from "@aws-sdk/client-s3";
import type { Logger } from "@tjm/platform";
import type { PlanOutput } from "@tjm/protocol";
import { MAX_PARTS, putSmallObject, type RetryOptions } from "@tjm/storage";
import { GrowingFileUpload } from "../storage/growing-upload.ts";
import { partSizeFor, partsInFlight } from "../storage/part-size.ts";
import { DEFAULT_PART_SIZE } from "../storage/parts.ts";
import { MultipartUploader, type UploadMeter, type UploadResult } from "../storage/upload.ts";

/** At most this much of an output is held in memory for a single PUT (the default part size). */
const SINGLE_PUT_MAX_BYTES = DEFAULT_PART_SIZE;
/** As a multipart upload's object gets none: what S3 itself would store. */
const OUTPUT_CONTENT_TYPE = "application/octet-stream";

export type UploadedOutput = Pick<UploadResult, "bytes" | "sha256" | "incomplete">;

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

export interface OutputUploadSettings extends RetryOptions {
  client: S3Client;
  /** Sends the requests that carry a body (PutObject, UploadPart); `client` when unset. */
  bodyClient?: S3Client | undefined;
  logger?: Logger;
  /** Where each output goes and where its upload state is kept. */
  uri: (outputId: string) => string;
  statePath: (outputId: string) => string;
  /**
   * Parts per upload: the store's (the lease's storage.maxParts), and under a multipart commit
   * also what the completion report can list; S3's 10,000 when unset.
   */
  partLimit: number | undefined;
  /** False under a multipart commit: the Manager completes the upload with the reported parts. */
  complete: boolean;
  /** WORKER_UPLOAD_PART_SIZE_MIB when set: every output's part size. */
  partSize: number | undefined;
  /** Parts of one output in flight at once, at most. */
  concurrency: number;
  meter?: UploadMeter | undefined;
}

/** What ffmpeg is about to write, and what is known of the input when it starts. */
export interface EncodeStart {
  outputs: readonly PlanOutput[];
  paths: Readonly<Record<string, string>>;
  durationMs: number | undefined;
  sourceHeight: number | undefined;
}

/**
 * Containers ffmpeg writes front to back and never seeks back in. MP4 with faststart rewrites
 * the whole file at the end; Matroska/WebM and MOV seek back to their header.
 */
export function writtenFrontToBack(output: Pick<PlanOutput, "container" | "fragmented">): boolean {
  return output.container === "mpegts" || (output.container === "mp4" && output.fragmented === true);
}

export class OutputUploads {
  private readonly partSizes = new Map<string, number>();
  private growing: GrowingFileUpload[] = [];

  constructor(private readonly settings: OutputUploadSettings) {}

  private get partLimit(): number {
    return this.settings.partLimit ?? MAX_PARTS;
  }

  /** ffmpeg is starting: fixes every output's part size and follows those written front to back. */
  begin(start: EncodeStart): void {
    for (const output of start.outputs) {
      const partSize =
        this.settings.partSize ??
        partSizeFor({
          output,
          durationMs: start.durationMs,
          sourceHeight: start.sourceHeight,
          partLimit: this.partLimit,
        });
      this.partSizes.set(output.id, partSize);
      if (!writtenFrontToBack(output)) continue;
      this.growing.push(
        new GrowingFileUpload({
          ...this.settings,
          file: start.paths[output.id] as string,
          uri: this.settings.uri(output.id),
          statePath: this.settings.statePath(output.id),
          partSize,
          partLimit: this.partLimit,
        }),
      );
    }
  }

  /** ffmpeg exited and its outputs are complete: what went up meanwhile is checked against them. */
  async finish(): Promise<void> {
    const growing = this.growing.splice(0);
    await Promise.all(growing.map((upload) => upload.finish()));
  }

  /** ffmpeg failed or the attempt ends: sending stops; the uploads stay for abandon() or a discard. */
  async stop(): Promise<void> {
    const growing = this.growing.splice(0);
    await Promise.all(growing.map((upload) => upload.stop()));
  }

  /** The outputs are thrown away (ffmpeg runs again on a downloaded input): their uploads are aborted. */
  async abandon(outputIds: readonly string[]): Promise<void> {
    await this.stop();
    for (const id of outputIds) await this.aborter(id).abort();
  }

  /**
   * Sends one complete output. One that fits a single part and has no upload under way (nothing
   * went up while it was written, no earlier try left a state file) goes as one PutObject where
   * the Worker completes its own upload (`copy`): a one-part multipart upload costs two more
   * requests, and the store rewrites the object at its completion (s3rver: 300–330 ms against
   * 146–184 ms for one 20 MiB PUT). Anything else goes through the resumable uploader.
   */
  async upload(output: { id: string; path: string }): Promise<UploadedOutput> {
    const { size } = await stat(output.path);
    const single =
      this.settings.complete &&
      size <= Math.min(this.partSizeOf(output.id), SINGLE_PUT_MAX_BYTES) &&
      !(await exists(this.settings.statePath(output.id)));
    if (!single) return (await this.uploader(output)).upload();
    const body = await readFile(output.path);
    const { sha256 } = await putSmallObject(
      this.settings.bodyClient ?? this.settings.client,
      this.settings.uri(output.id),
      body,
      OUTPUT_CONTENT_TYPE,
      this.settings,
    );
    this.settings.meter?.partUploaded(size);
    return { bytes: size, sha256 };
  }

  private partSizeOf(outputId: string): number {
    // After a restart the plan's estimate is gone; an upload under way keeps its own part size.
    return this.partSizes.get(outputId) ?? this.settings.partSize ?? DEFAULT_PART_SIZE;
  }

  /** The upload of a complete output: every part still to send in flight at once, within the bounds. */
  private async uploader(output: { id: string; path: string }): Promise<MultipartUploader> {
    const partSize = this.partSizeOf(output.id);
    const { size } = await stat(output.path);
    return new MultipartUploader({
      ...this.settings,
      file: output.path,
      uri: this.settings.uri(output.id),
      statePath: this.settings.statePath(output.id),
      partSize,
      partLimit: this.partLimit,
      concurrency: partsInFlight(
        Math.max(1, Math.ceil(size / partSize)),
        partSize,
        this.settings.concurrency,
      ),
    });
  }

  /** Enough of an uploader to abort the upload its state file names; a fresh signal and a short budget. */
  aborter(outputId: string): MultipartUploader {
    return new MultipartUploader({
      client: this.settings.client,
      // abort() reads only the state file.
      file: "",
      uri: this.settings.uri(outputId),
      statePath: this.settings.statePath(outputId),
      retry: { maxAttempts: 2, budgetMs: 5000 },
      logger: this.settings.logger,
    });
  }
}
