/**
 * The part size of an output's multipart upload, fixed before ffmpeg starts so parts can go
 * up while it writes, and how many parts go up at once when the file is complete; pure.
 *
 * The rule: the output's estimated size (bitrate × duration) times 1.5, divided by the store's
 * part limit, rounded up to a whole MiB, and at least 5 MiB. An output that outgrows the
 * estimate is still uploaded: the uploader raises the part size at the end (parts.ts) and
 * sends it again.
 */
import { MAX_PARTS } from "@tjm/storage";
import { DEFAULT_PART_SIZE, MAX_PART_SIZE, MIB, MIN_PART_SIZE } from "./parts.ts";

/** What of an output's plan its size depends on (a PlanOutput fits). */
export interface SizedOutput {
  video?: { codec: string; height?: number | undefined } | undefined;
  audio?: { bitrateKbps: number } | undefined;
}

export interface PartSizeRequest {
  output: SizedOutput;
  /** The output's duration when known (the input's, less removed segments). */
  durationMs: number | undefined;
  /** The input's picture height, for an output that keeps it; undefined when not known yet. */
  sourceHeight: number | undefined;
  /** Parts the store allows per upload: 10,000 on S3, 1,000 on Swift's s3api. */
  partLimit: number;
}

/** Headroom over the estimate: constant-quality encodes of busy footage run above the table. */
export const SIZE_MARGIN = 1.5;

/**
 * H.264 kb/s at constant quality with the fastest preset (the largest files the presets make)
 * on ordinary footage, by the largest height of each row. Plans carry no video bitrate.
 */
const H264_KBPS_BY_HEIGHT: readonly (readonly [number, number])[] = [
  [360, 1_200],
  [480, 2_000],
  [720, 4_000],
  [1080, 8_000],
  [1440, 14_000],
  [2160, 30_000],
  [4320, 100_000],
];

/** The same picture in fewer bits than H.264 (the usual rule of thumb for each). */
const CODEC_FACTOR: Readonly<Record<string, number>> = { h264: 1, hevc: 0.6, vp9: 0.65, av1: 0.5 };

/** Used when neither the plan nor the input says the height. */
const UNKNOWN_HEIGHT = 1080;

/** WORKER_UPLOAD_CONCURRENCY's default: a 60 s 720p output's parts all go at once. */
export const MAX_PARTS_IN_FLIGHT = 16;

/** Parts in flight are held in memory: at most this much of one output at a time. */
export const MAX_BYTES_IN_FLIGHT = 256 * MIB;

/** Estimated bits per second of an output, video and audio together. */
export function estimatedBitrate(output: SizedOutput, sourceHeight: number | undefined): number {
  let kbps = output.audio?.bitrateKbps ?? 0;
  if (output.video) {
    const height = output.video.height ?? sourceHeight ?? UNKNOWN_HEIGHT;
    const row = H264_KBPS_BY_HEIGHT.find(([maxHeight]) => height <= maxHeight);
    const h264 = row ? row[1] : (H264_KBPS_BY_HEIGHT.at(-1) as readonly [number, number])[1];
    kbps += h264 * (CODEC_FACTOR[output.video.codec] ?? 1);
  }
  return kbps * 1000;
}

/**
 * The part size by the rule above. Without a duration there is nothing to estimate from:
 * DEFAULT_PART_SIZE, which fits 312 GiB in 10,000 parts (31 GiB in 1,000).
 */
export function partSizeFor(request: PartSizeRequest): number {
  const { partLimit, durationMs } = request;
  if (!Number.isInteger(partLimit) || partLimit < 1 || partLimit > MAX_PARTS) {
    throw new RangeError(`the part limit must be 1 to ${MAX_PARTS}, got ${partLimit}`);
  }
  if (durationMs === undefined || !(durationMs > 0)) return DEFAULT_PART_SIZE;
  const bytes = (estimatedBitrate(request.output, request.sourceHeight) / 8) * (durationMs / 1000);
  const perPart = Math.ceil((bytes * SIZE_MARGIN) / partLimit / MIB) * MIB;
  return Math.min(MAX_PART_SIZE, Math.max(MIN_PART_SIZE, perPart));
}

/**
 * Parts sent at once when the whole file is there: every part, up to `bound` requests and
 * the memory budget (at least one).
 */
export function partsInFlight(partCount: number, partSize: number, bound: number): number {
  const byMemory = Math.floor(MAX_BYTES_IN_FLIGHT / partSize);
  return Math.max(1, Math.min(partCount, bound, byMemory));
}
