/**
 * The normalised execution plan: what the Manager stores once it has validated a job's
 * template, shows in a job's detail, and sends in every lease; what the Worker runs. Every
 * default is filled in and only portable names appear (the Manager's template accepts
 * preset and codec aliases and replaces them). Rules across fields (container/codec
 * combinations, overlaps, duplicates) are the Manager's, checked when a job is submitted.
 *
 * Each string, array and number is bounded (messages.ts says why), so the largest plan
 * this schema accepts fits in messageLimits.planBytes. The `.meta()` ids and descriptions
 * are what the Manager's OpenAPI document shows.
 */
import { parseS3Uri } from "@tjm/storage";
import { z } from "zod";
import { PORTABLE_AUDIO_CODECS, PORTABLE_VIDEO_CODECS } from "./encoders.ts";

export const CONTAINERS = ["mp4", "mov", "mkv", "webm", "mpegts"] as const;
export type Container = (typeof CONTAINERS)[number];

/** Portable speed/quality presets; the Worker maps each to its encoder's own preset names. */
export const VIDEO_PRESETS = ["fastest", "fast", "medium", "slow", "slowest"] as const;
export type VideoPreset = (typeof VIDEO_PRESETS)[number];

export const SUBTITLE_MODES = ["BURN_IN", "SOFT"] as const;
export type SubtitleMode = (typeof SUBTITLE_MODES)[number];

export const WATERMARK_POSITIONS = [
  "top-left",
  "top-right",
  "bottom-left",
  "bottom-right",
  "center",
] as const;
export type WatermarkPosition = (typeof WATERMARK_POSITIONS)[number];

export const planLimits = {
  outputs: 10,
  heightMin: 144,
  heightMax: 4320,
  audioBitrateKbpsMin: 32,
  audioBitrateKbpsMax: 512,
  removedSegments: 100,
  subtitles: 16,
  audioTracks: 16,
  /** The longest tag RFC 5646 (4.4.1) asks every implementation to hold. */
  languageTagLength: 35,
  pathLength: 4096,
} as const;

// ---- fields ----------------------------------------------------------------------------

/** Half of a UTF-16 pair on its own: JavaScript keeps it, PostgreSQL's jsonb refuses it. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a Worker work directory is unusable, or undefined when it is fine. */
export function workspacePathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) return "must be an absolute path";
  if (path.split("/").includes("..")) return "must not contain '..' segments";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(path)) return "must not contain control characters";
  if (LONE_SURROGATE.test(path)) return "must be well-formed Unicode";
  if (path.length > planLimits.pathLength) return `must be at most ${planLimits.pathLength} characters`;
  return undefined;
}

/** An s3://bucket/key location; parseS3Uri bounds the bucket and the key. */
const s3Location = (example: string) =>
  z
    .string()
    .superRefine((uri, ctx) => {
      const parsed = parseS3Uri(uri);
      if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.problem });
    })
    .meta({ description: "Object-storage location, s3://bucket/key", example });

const languageTag = z
  .string()
  .max(planLimits.languageTagLength)
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "must be a language tag such as en, fa or pt-BR");

// ---- the plan --------------------------------------------------------------------------

export const PlanVideoSchema = z
  .object({
    codec: z.enum(PORTABLE_VIDEO_CODECS).meta({
      description: "Portable codec intent; the Worker picks its pool's encoder",
      example: "h264",
    }),
    height: z
      .number()
      .int()
      .min(planLimits.heightMin)
      .max(planLimits.heightMax)
      .refine((height) => height % 2 === 0, "height must be an even number")
      .optional()
      .meta({
        description: `Output height in pixels (${planLimits.heightMin}..${planLimits.heightMax}, even); width follows the aspect ratio, rounded to even. Omitted: the input's height.`,
        example: 720,
      }),
    preset: z.enum(VIDEO_PRESETS).meta({
      description: "Portable speed/quality trade-off, mapped to each encoder's presets",
      example: "medium",
    }),
  })
  .meta({ id: "PlanVideo" });

export const PlanAudioSchema = z
  .object({
    codec: z.enum(PORTABLE_AUDIO_CODECS).meta({ example: "aac" }),
    bitrateKbps: z
      .number()
      .int()
      .min(planLimits.audioBitrateKbpsMin)
      .max(planLimits.audioBitrateKbpsMax)
      .meta({
        description: `Kilobits per second, ${planLimits.audioBitrateKbpsMin}..${planLimits.audioBitrateKbpsMax} (mp3 at most 320, opus at most 510)`,
        example: 128,
      }),
  })
  .meta({ id: "PlanAudio" });

export const PlanOutputSchema = z
  .object({
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
        "must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit",
      )
      .meta({ description: "Identifier chosen by the client, unique within the plan", example: "720p" }),
    kind: z.enum(["FILE"]).meta({ description: "FILE: one media file at destinationUri", example: "FILE" }),
    container: z.enum(CONTAINERS).meta({
      description: "mp4, mov, mkv, webm (vp9/av1 + opus) or mpegts (h264/hevc + aac/mp3)",
      example: "mp4",
    }),
    fragmented: z.boolean().optional().meta({
      description:
        "mp4 only. true: fragmented MP4 (a fragment per keyframe interval, index up front, playable while it grows), which the Worker uploads while it encodes; absent or false: one index moved to the front at the end (faststart)",
      example: false,
    }),
    destinationUri: s3Location("s3://media-out/movies/42/720p.mp4"),
    video: PlanVideoSchema.optional(),
    audio: PlanAudioSchema.optional(),
  })
  .meta({ id: "PlanOutput" });

/** The plan's outputs, of `output` (the Manager's template widens each output's input). */
export const planOutputList = <Output extends z.ZodType>(output: Output) =>
  z
    .array(output)
    .min(1, "at least one output is required")
    .max(planLimits.outputs, `at most ${planLimits.outputs} outputs are allowed`);

/** Milliseconds on the input's timeline; the Manager guarantees endMs > startMs and no overlaps. */
export const RemovedSegmentSchema = z
  .object({
    startMs: z.number().int().min(0).meta({ example: 0 }),
    endMs: z.number().int().min(1).meta({ description: "Greater than startMs", example: 15000 }),
  })
  .meta({
    id: "RemovedSegment",
    description: "A span of the input left out of every output; spans must not overlap",
  });

export const SubtitleSchema = z
  .object({
    uri: s3Location("s3://media-in/movies/42/en.srt"),
    language: languageTag.meta({ example: "en" }),
    mode: z.enum(SUBTITLE_MODES).meta({
      description: "BURN_IN draws it into the picture (at most one); SOFT muxes it as a track",
      example: "SOFT",
    }),
  })
  .meta({ id: "Subtitle" });

export const AudioTrackSchema = z
  .object({
    streamIndex: z
      .number()
      .int()
      .min(0)
      .max(63)
      .meta({ description: "Index among the input's audio streams (0 = first audio stream)", example: 0 }),
    language: languageTag
      .optional()
      .meta({ description: "Language tag written on the output track", example: "en" }),
  })
  .meta({
    id: "AudioTrack",
    description: "An input audio stream to keep; without audioTracks the first one is used",
  });

export const PlanWatermarkSchema = z
  .object({
    uri: s3Location("s3://media-in/brand/logo.png"),
    position: z.enum(WATERMARK_POSITIONS).meta({ example: "bottom-right" }),
    marginPx: z.number().int().min(0).max(500).meta({ example: 16 }),
    opacity: z.number().min(0).max(1).meta({ example: 0.8 }),
    widthPercent: z.number().min(1).max(100).optional().meta({
      description: "Watermark width as a share of the video width; omitted: its own size",
      example: 10,
    }),
  })
  .meta({ id: "PlanWatermark" });

export const PlanTransformsSchema = z
  .object({
    removedSegments: z.array(RemovedSegmentSchema).max(planLimits.removedSegments),
    subtitles: z.array(SubtitleSchema).max(planLimits.subtitles),
    audioTracks: z.array(AudioTrackSchema).max(planLimits.audioTracks),
    watermark: PlanWatermarkSchema.optional(),
  })
  .meta({ id: "PlanTransforms" });

export const ExecutionPlanSchema = z
  .object({
    input: z.object({ uri: s3Location("s3://media-in/movies/42/source.mov") }),
    outputs: planOutputList(PlanOutputSchema),
    transforms: PlanTransformsSchema,
    workspace: z
      .object({
        rootDirectory: z
          .string()
          .superRefine((path, ctx) => {
            const problem = workspacePathProblem(path);
            if (problem) ctx.addIssue({ code: "custom", message: problem });
          })
          .meta({
            description: "Absolute work directory on the Worker, no '..' segments",
            example: "/var/lib/tjm/work",
          }),
      })
      .optional(),
    manifestUri: s3Location("s3://media-out/movies/42/manifest.json").optional(),
  })
  .meta({
    id: "ExecutionPlan",
    description: "The stored, normalised plan (defaults filled in, legacy codec and preset names replaced)",
  });

export type ExecutionPlan = z.infer<typeof ExecutionPlanSchema>;
export type PlanOutput = z.infer<typeof PlanOutputSchema>;
export type PlanVideo = z.infer<typeof PlanVideoSchema>;
export type PlanAudio = z.infer<typeof PlanAudioSchema>;
export type PlanTransforms = z.infer<typeof PlanTransformsSchema>;
export type RemovedSegment = z.infer<typeof RemovedSegmentSchema>;
export type PlanSubtitle = z.infer<typeof SubtitleSchema>;
export type PlanAudioTrack = z.infer<typeof AudioTrackSchema>;
export type PlanWatermark = z.infer<typeof PlanWatermarkSchema>;
