/**
 * The execution plan as the Worker receives it in a lease: the Manager's stored, normalised
 * plan (defaults filled in, legacy codec names replaced by the portable ones). The Manager
 * owns the schema (manager/src/jobs/schema.ts) and the protocol carries the plan as opaque
 * JSON, so this is a structural copy of the fields the Worker reads, not a second validator.
 */
import type { PortableAudioCodec, PortableVideoCodec } from "@tjm/protocol";

export type Container = "mp4" | "mov" | "mkv" | "webm" | "mpegts";

/** Portable speed/quality intent; presets.ts maps it to each encoder family's own names. */
export type VideoPreset = "fastest" | "fast" | "medium" | "slow" | "slowest";

export type WatermarkPosition = "top-left" | "top-right" | "bottom-left" | "bottom-right" | "center";

export interface PlanVideo {
  codec: PortableVideoCodec;
  /** Even; omitted: the input's height. Width follows the aspect ratio, rounded to even. */
  height?: number;
  preset: VideoPreset;
}

export interface PlanAudio {
  codec: PortableAudioCodec;
  bitrateKbps: number;
}

export interface PlanOutput {
  id: string;
  kind: "FILE";
  container: Container;
  destinationUri: string;
  video?: PlanVideo;
  audio?: PlanAudio;
}

/** Milliseconds on the input's timeline; the Manager guarantees endMs > startMs and no overlaps. */
export interface RemovedSegment {
  startMs: number;
  endMs: number;
}

export interface PlanSubtitle {
  uri: string;
  /** BCP 47 tag such as "en" or "pt-BR". */
  language: string;
  mode: "BURN_IN" | "SOFT";
}

export interface PlanAudioTrack {
  /** Index among the input's audio streams (0 = the first audio stream). */
  streamIndex: number;
  language?: string;
}

export interface PlanWatermark {
  uri: string;
  position: WatermarkPosition;
  marginPx: number;
  /** 0..1 */
  opacity: number;
  /** Share of the output video's width; omitted: the image's own size. */
  widthPercent?: number;
}

export interface PlanTransforms {
  removedSegments: RemovedSegment[];
  subtitles: PlanSubtitle[];
  audioTracks: PlanAudioTrack[];
  watermark?: PlanWatermark;
}

export interface ExecutionPlan {
  input: { uri: string };
  outputs: PlanOutput[];
  transforms: PlanTransforms;
  workspace?: { rootDirectory: string };
  manifestUri?: string;
}
