/**
 * Pure rules of an execution plan that a field schema alone cannot say: locations,
 * container/codec combinations, overlaps, duplicates, and the pool a job runs on; and the
 * codec and preset aliases the API accepts beyond the plan's own names (@tjm/protocol).
 * No I/O. The schema (schema.ts) calls these; each rule is unit-tested in plan.test.ts.
 */

import {
  CONTAINERS,
  type Container,
  PORTABLE_AUDIO_CODECS,
  PORTABLE_VIDEO_CODECS,
  type PortableAudioCodec,
  type PortableVideoCodec,
  planLimits,
  poolOfCapability,
  VIDEO_PRESETS,
  type VideoPreset,
  WORKER_POOLS,
  type WorkerPool,
} from "@tjm/protocol";

export { poolOfCapability, WORKER_POOLS, type WorkerPool };

/** Backend encoder names older clients send; each means the portable H.264 intent. */
export const LEGACY_VIDEO_CODECS = ["libx264", "h264_nvenc", "h264_qsv"] as const;
type LegacyVideoCodec = (typeof LEGACY_VIDEO_CODECS)[number];

/**
 * Preset words users already know, each stored as the portable preset it falls in: x264/x265's
 * ten names and NVENC's p1 (fastest) .. p7 (slowest). "medium" and "slow" are x264 words too
 * and already portable names, so they mean themselves.
 */
export const PRESET_ALIASES = {
  ultrafast: "fastest",
  superfast: "fastest",
  p1: "fastest",
  p2: "fastest",
  veryfast: "fast",
  faster: "fast",
  p3: "fast",
  p4: "medium",
  p5: "slow",
  slower: "slowest",
  veryslow: "slowest",
  placebo: "slowest",
  p6: "slowest",
  p7: "slowest",
} as const satisfies Record<string, VideoPreset>;
export const VIDEO_PRESET_ALIASES = Object.keys(PRESET_ALIASES) as (keyof typeof PRESET_ALIASES)[];

export function normaliseVideoPreset(preset: VideoPreset | keyof typeof PRESET_ALIASES): VideoPreset {
  return Object.hasOwn(PRESET_ALIASES, preset)
    ? PRESET_ALIASES[preset as keyof typeof PRESET_ALIASES]
    : (preset as VideoPreset);
}

/** The alias table as the OpenAPI description shows it (one row per portable preset). */
export function presetAliasTable(): string {
  const words = (portable: VideoPreset, nvenc: boolean) =>
    VIDEO_PRESET_ALIASES.filter(
      (alias) => PRESET_ALIASES[alias] === portable && /^p\d$/.test(alias) === nvenc,
    );
  const rows = VIDEO_PRESETS.map((portable) => {
    const x264 = words(portable, false);
    const cell = x264.length > 0 ? x264.join(", ") : `(${portable})`;
    return `| ${portable} | ${cell} | ${words(portable, true).join(", ")} |`;
  });
  return ["| portable | x264 / x265 words | NVENC |", "|---|---|---|", ...rows].join("\n");
}

/** The plan's bounds (@tjm/protocol) and the job's own. */
export const limits = { ...planLimits, requiredCapabilities: 32 } as const;

/** Highest bitrate each audio encoder accepts (MPEG-1 Layer III tops out at 320 kb/s; Opus at 510). */
export const audioBitrateKbpsMaxByCodec: Record<PortableAudioCodec, number> = {
  aac: 512,
  opus: 510,
  mp3: 320,
};

/** What each container can carry; ffmpeg refuses to mux the rest or players cannot read it. */
export const containerSupport: Record<
  Container,
  { video: PortableVideoCodec[]; audio: PortableAudioCodec[]; softSubtitles: boolean }
> = {
  mp4: { video: ["h264", "hevc", "av1", "vp9"], audio: ["aac", "mp3", "opus"], softSubtitles: true },
  mov: { video: ["h264", "hevc"], audio: ["aac", "mp3"], softSubtitles: true },
  mkv: { video: ["h264", "hevc", "av1", "vp9"], audio: ["aac", "mp3", "opus"], softSubtitles: true },
  webm: { video: ["vp9", "av1"], audio: ["opus"], softSubtitles: true },
  mpegts: { video: ["h264", "hevc"], audio: ["aac", "mp3"], softSubtitles: false },
};

/** What a known container can carry; undefined for any other value, "__proto__" and "toString" included. */
function supportOf(container: string | undefined) {
  return container !== undefined && (CONTAINERS as readonly string[]).includes(container)
    ? containerSupport[container as Container]
    : undefined;
}

/** A legacy name becomes the portable H.264 intent; any other name stays, for the schema to judge. */
export function normaliseVideoCodec(codec: PortableVideoCodec | LegacyVideoCodec): PortableVideoCodec;
export function normaliseVideoCodec(codec: string): string;
export function normaliseVideoCodec(codec: string): string {
  return (LEGACY_VIDEO_CODECS as readonly string[]).includes(codec) ? "h264" : codec;
}

// ---- worker pool -----------------------------------------------------------------------

export type PoolDerivation = { ok: true; pool: WorkerPool } | { ok: false; problem: string };

/**
 * nvenc/cuda/cuvid/nvdec/npp names -> nvidia, qsv -> intel, amf -> amd, otherwise cpu.
 * Capabilities of two vendors cannot run on one Worker, so they are refused.
 */
export function deriveWorkerPool(capabilities: readonly string[]): PoolDerivation {
  const pools = new Set(capabilities.map(poolOfCapability).filter((pool) => pool !== undefined));
  if (pools.size > 1) {
    return {
      ok: false,
      problem: `capabilities need more than one hardware vendor (${[...pools].sort().join(", ")})`,
    };
  }
  const [pool] = pools;
  return { ok: true, pool: pool ?? "cpu" };
}

// ---- cross-field rules -----------------------------------------------------------------

export interface PlanIssue {
  path: (string | number)[];
  message: string;
}

type Loose = Record<string, unknown>;
const record = (value: unknown): Loose | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Loose) : undefined;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const integer = (value: unknown): number | undefined =>
  Number.isInteger(value) ? (value as number) : undefined;

/**
 * Rules across fields. Runs even when some fields failed their own schema, so a request
 * learns every problem at once; each rule looks only at values of the right type.
 */
export function planRuleIssues(plan: unknown): PlanIssue[] {
  const issues: PlanIssue[] = [];
  const root = record(plan);
  if (!root) return issues;
  const outputs = list(root.outputs).map(record);
  const transforms = record(root.transforms);
  const subtitles = list(transforms?.subtitles).map(record);
  const inputUri = text(record(root.input)?.uri);

  const firstOutputWithId = new Map<string, number>();
  const firstOutputWithDestination = new Map<string, number>();
  outputs.forEach((output, index) => {
    if (!output) return;
    const id = text(output.id);
    if (id !== undefined) {
      const first = firstOutputWithId.get(id);
      if (first === undefined) firstOutputWithId.set(id, index);
      else
        issues.push({
          path: ["outputs", index, "id"],
          message: `duplicate output id '${id}' (also outputs.${first}.id)`,
        });
    }
    const destination = text(output.destinationUri);
    if (destination !== undefined) {
      const first = firstOutputWithDestination.get(destination);
      if (first === undefined) firstOutputWithDestination.set(destination, index);
      else {
        issues.push({
          path: ["outputs", index, "destinationUri"],
          message: `two outputs write to the same location (also outputs.${first}.destinationUri)`,
        });
      }
      if (destination === inputUri) {
        issues.push({ path: ["outputs", index, "destinationUri"], message: "must not overwrite the input" });
      }
    }
    issues.push(...outputCodecIssues(output, index));
  });

  const manifestUri = text(root.manifestUri);
  if (manifestUri !== undefined) {
    if (manifestUri === inputUri)
      issues.push({ path: ["manifestUri"], message: "must not overwrite the input" });
    const output = firstOutputWithDestination.get(manifestUri);
    if (output !== undefined) {
      issues.push({
        path: ["manifestUri"],
        message: `must differ from every output location (same as outputs.${output}.destinationUri)`,
      });
    }
  }

  issues.push(...removedSegmentIssues(list(transforms?.removedSegments)));
  issues.push(...subtitleIssues(subtitles, outputs));
  issues.push(...audioTrackIssues(list(transforms?.audioTracks)));

  const anyVideoOutput = outputs.some((output) => record(output?.video));
  if (transforms?.watermark !== undefined && outputs.length > 0 && !anyVideoOutput) {
    issues.push({
      path: ["transforms", "watermark"],
      message: "a watermark needs at least one output with video",
    });
  }
  return issues;
}

function outputCodecIssues(output: Loose, index: number): PlanIssue[] {
  const issues: PlanIssue[] = [];
  const video = record(output.video);
  const audio = record(output.audio);
  if (output.video === undefined && output.audio === undefined) {
    issues.push({ path: ["outputs", index], message: "an output needs video, audio or both" });
  }
  const container = text(output.container);
  const support = supportOf(container);
  if (output.fragmented === true && container !== undefined && container !== "mp4") {
    issues.push({
      path: ["outputs", index, "fragmented"],
      message: `only mp4 outputs can be fragmented, not ${container}`,
    });
  }
  const videoCodec = text(video?.codec);
  if (support && videoCodec !== undefined) {
    const codec = normaliseVideoCodec(videoCodec);
    if (
      (PORTABLE_VIDEO_CODECS as readonly string[]).includes(codec) &&
      !support.video.includes(codec as PortableVideoCodec)
    ) {
      issues.push({
        path: ["outputs", index, "video", "codec"],
        message: `container ${container} cannot carry ${codec} video; use ${support.video.join(" or ")}`,
      });
    }
  }
  const audioCodec = text(audio?.codec);
  if (
    support &&
    audioCodec !== undefined &&
    (PORTABLE_AUDIO_CODECS as readonly string[]).includes(audioCodec)
  ) {
    if (!support.audio.includes(audioCodec as PortableAudioCodec)) {
      issues.push({
        path: ["outputs", index, "audio", "codec"],
        message: `container ${container} cannot carry ${audioCodec} audio; use ${support.audio.join(" or ")}`,
      });
    }
  }
  const bitrate = integer(audio?.bitrateKbps);
  if (
    audioCodec !== undefined &&
    bitrate !== undefined &&
    Object.hasOwn(audioBitrateKbpsMaxByCodec, audioCodec)
  ) {
    const max = audioBitrateKbpsMaxByCodec[audioCodec as PortableAudioCodec];
    if (bitrate > max) {
      issues.push({
        path: ["outputs", index, "audio", "bitrateKbps"],
        message: `${audioCodec} allows at most ${max} kb/s`,
      });
    }
  }
  return issues;
}

function removedSegmentIssues(segments: unknown[]): PlanIssue[] {
  const issues: PlanIssue[] = [];
  const valid: { index: number; start: number; end: number }[] = [];
  segments.forEach((value, index) => {
    const segment = record(value);
    const start = integer(segment?.startMs);
    const end = integer(segment?.endMs);
    if (start === undefined || end === undefined) return;
    if (end <= start) {
      issues.push({
        path: ["transforms", "removedSegments", index, "endMs"],
        message: "endMs must be greater than startMs",
      });
      return;
    }
    valid.push({ index, start, end });
  });
  // Sorted by start, a segment overlaps an earlier one exactly when it starts before the
  // furthest end seen so far. Touching segments ([0,1000] and [1000,2000]) do not overlap.
  valid.sort((a, b) => a.start - b.start || a.index - b.index);
  let furthest: { index: number; end: number } | undefined;
  for (const segment of valid) {
    if (furthest && segment.start < furthest.end) {
      const [later, earlier] =
        segment.index > furthest.index ? [segment.index, furthest.index] : [furthest.index, segment.index];
      issues.push({
        path: ["transforms", "removedSegments", later],
        message: `overlaps transforms.removedSegments.${earlier}`,
      });
    }
    if (!furthest || segment.end > furthest.end) furthest = { index: segment.index, end: segment.end };
  }
  return issues;
}

function subtitleIssues(subtitles: (Loose | undefined)[], outputs: (Loose | undefined)[]): PlanIssue[] {
  const issues: PlanIssue[] = [];
  let firstBurnIn: number | undefined;
  let firstSoft: number | undefined;
  subtitles.forEach((subtitle, index) => {
    const mode = text(subtitle?.mode);
    if (mode === "BURN_IN") {
      if (firstBurnIn === undefined) firstBurnIn = index;
      else {
        issues.push({
          path: ["transforms", "subtitles", index, "mode"],
          message: `at most one subtitle may be burned in (transforms.subtitles.${firstBurnIn} already is)`,
        });
      }
    }
    if (mode === "SOFT" && firstSoft === undefined) firstSoft = index;
  });
  if (firstBurnIn !== undefined && outputs.length > 0 && !outputs.some((output) => record(output?.video))) {
    issues.push({
      path: ["transforms", "subtitles", firstBurnIn, "mode"],
      message: "a burned-in subtitle needs at least one output with video",
    });
  }
  if (firstSoft !== undefined) {
    outputs.forEach((output, index) => {
      const container = text(output?.container);
      if (supportOf(container)?.softSubtitles === false) {
        issues.push({
          path: ["outputs", index, "container"],
          message: `container ${container} cannot carry soft subtitles (transforms.subtitles.${firstSoft}); burn it in or use mp4, mov, mkv or webm`,
        });
      }
    });
  }
  return issues;
}

function audioTrackIssues(tracks: unknown[]): PlanIssue[] {
  const issues: PlanIssue[] = [];
  const firstWithIndex = new Map<number, number>();
  tracks.forEach((value, index) => {
    const streamIndex = integer(record(value)?.streamIndex);
    if (streamIndex === undefined) return;
    const first = firstWithIndex.get(streamIndex);
    if (first === undefined) firstWithIndex.set(streamIndex, index);
    else {
      issues.push({
        path: ["transforms", "audioTracks", index, "streamIndex"],
        message: `audio stream ${streamIndex} is already selected by transforms.audioTracks.${first}`,
      });
    }
  });
  return issues;
}
