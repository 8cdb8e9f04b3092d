import { z } from "@hono/zod-openapi";
import { ATTEMPT_STATES, JOB_STATES } from "./lifecycle.ts";
import {
  AUDIO_CODECS,
  CONTAINERS,
  LEGACY_VIDEO_CODECS,
  limits,
  normaliseVideoCodec,
  normaliseVideoPreset,
  parseS3Uri,
  planRuleIssues,
  presetAliasTable,
  SUBTITLE_MODES,
  VIDEO_CODECS,
  VIDEO_PRESET_ALIASES,
  VIDEO_PRESETS,
  WATERMARK_POSITIONS,
  WORKER_POOLS,
  workspacePathProblem,
} from "./plan.ts";

const s3Uri = (example: string) =>
  z
    .string()
    .superRefine((uri, ctx) => {
      const parsed = parseS3Uri(uri);
      if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.problem });
    })
    .openapi({ description: "Object-storage location, s3://bucket/key", example });

export const JobStateSchema = z.enum(JOB_STATES).openapi("JobState", { example: "QUEUED" });
export const AttemptStateSchema = z.enum(ATTEMPT_STATES).openapi("AttemptState", { example: "CREATED" });
export const WorkerPoolSchema = z
  .enum(WORKER_POOLS)
  .openapi("WorkerPool", { description: "Kind of Worker host a job runs on", example: "cpu" });

const OutputVideo = z
  .object({
    codec: z
      .enum([...VIDEO_CODECS, ...LEGACY_VIDEO_CODECS])
      .transform(normaliseVideoCodec)
      .openapi({
        description:
          "Portable codec intent; the Worker picks its pool's encoder. The legacy encoder names libx264, h264_nvenc and h264_qsv are accepted and stored as h264.",
        example: "h264",
      }),
    height: z
      .number()
      .int()
      .min(limits.heightMin)
      .max(limits.heightMax)
      .refine((height) => height % 2 === 0, "height must be an even number")
      .optional()
      .openapi({
        description: `Output height in pixels (${limits.heightMin}..${limits.heightMax}, even); width follows the aspect ratio, rounded to even. Omitted: the input's height.`,
        example: 720,
      }),
    preset: z
      .enum([...VIDEO_PRESETS, ...VIDEO_PRESET_ALIASES])
      .default("medium")
      .transform(normaliseVideoPreset)
      .openapi({
        description: `Portable speed/quality trade-off, mapped to each encoder's presets. The x264/x265 preset names and NVENC's p1..p7 are accepted and stored as the portable name they fall in (a portable name always means itself):\n\n${presetAliasTable()}`,
        example: "medium",
      }),
  })
  .openapi("OutputVideo");

const OutputAudio = z
  .object({
    codec: z.enum(AUDIO_CODECS).openapi({ example: "aac" }),
    bitrateKbps: z
      .number()
      .int()
      .min(limits.audioBitrateKbpsMin)
      .max(limits.audioBitrateKbpsMax)
      .default(128)
      .openapi({
        description: `Kilobits per second, ${limits.audioBitrateKbpsMin}..${limits.audioBitrateKbpsMax} (mp3 at most 320, opus at most 510)`,
        example: 128,
      }),
  })
  .openapi("OutputAudio");

const Output = z
  .object({
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
        "must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit",
      )
      .openapi({ description: "Identifier chosen by the client, unique within the plan", example: "720p" }),
    kind: z
      .enum(["FILE"])
      .openapi({ description: "FILE: one media file at destinationUri", example: "FILE" }),
    container: z.enum(CONTAINERS).openapi({
      description: "mp4, mov, mkv, webm (vp9/av1 + opus) or mpegts (h264/hevc + aac/mp3)",
      example: "mp4",
    }),
    destinationUri: s3Uri("s3://media-out/movies/42/720p.mp4"),
    video: OutputVideo.optional(),
    audio: OutputAudio.optional(),
  })
  .openapi("Output");

const RemovedSegment = z
  .object({
    startMs: z.number().int().min(0).openapi({ example: 0 }),
    endMs: z.number().int().min(1).openapi({ description: "Greater than startMs", example: 15000 }),
  })
  .openapi("RemovedSegment", {
    description: "A span of the input left out of every output; spans must not overlap",
  });

const Subtitle = z
  .object({
    uri: s3Uri("s3://media-in/movies/42/en.srt"),
    language: z
      .string()
      .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "must be a language tag such as en, fa or pt-BR")
      .openapi({ example: "en" }),
    mode: z.enum(SUBTITLE_MODES).openapi({
      description: "BURN_IN draws it into the picture (at most one); SOFT muxes it as a track",
      example: "SOFT",
    }),
  })
  .openapi("Subtitle");

const AudioTrack = z
  .object({
    streamIndex: z
      .number()
      .int()
      .min(0)
      .max(63)
      .openapi({ description: "Index among the input's audio streams (0 = first audio stream)", example: 0 }),
    language: z
      .string()
      .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "must be a language tag such as en, fa or pt-BR")
      .optional()
      .openapi({ description: "Language tag written on the output track", example: "en" }),
  })
  .openapi("AudioTrack", {
    description: "An input audio stream to keep; without audioTracks the first one is used",
  });

const Watermark = z
  .object({
    uri: s3Uri("s3://media-in/brand/logo.png"),
    position: z.enum(WATERMARK_POSITIONS).default("bottom-right").openapi({ example: "bottom-right" }),
    marginPx: z.number().int().min(0).max(500).default(16).openapi({ example: 16 }),
    opacity: z.number().min(0).max(1).default(1).openapi({ example: 0.8 }),
    widthPercent: z.number().min(1).max(100).optional().openapi({
      description: "Watermark width as a share of the video width; omitted: its own size",
      example: 10,
    }),
  })
  .openapi("Watermark");

const Transforms = z
  .object({
    removedSegments: z.array(RemovedSegment).max(limits.removedSegments).default([]),
    subtitles: z.array(Subtitle).max(limits.subtitles).default([]),
    audioTracks: z.array(AudioTrack).max(limits.audioTracks).default([]),
    watermark: Watermark.optional(),
  })
  .openapi("Transforms");

export const ExecutionPlanTemplateSchema = z
  .object({
    input: z.object({ uri: s3Uri("s3://media-in/movies/42/source.mov") }),
    outputs: z
      .array(Output)
      .min(1, "at least one output is required")
      .max(limits.outputs, `at most ${limits.outputs} outputs are allowed`),
    transforms: Transforms.default({ removedSegments: [], subtitles: [], audioTracks: [] }),
    workspace: z
      .object({
        rootDirectory: z
          .string()
          .superRefine((path, ctx) => {
            const problem = workspacePathProblem(path);
            if (problem) ctx.addIssue({ code: "custom", message: problem });
          })
          .openapi({
            description: "Absolute work directory on the Worker, no '..' segments",
            example: "/var/lib/tjm/work",
          }),
      })
      .optional(),
    manifestUri: s3Uri("s3://media-out/movies/42/manifest.json").optional(),
  })
  // Cross-field rules run even when some fields failed, so every problem is reported at once.
  .superRefine(
    (plan, ctx) => {
      for (const issue of planRuleIssues(plan))
        ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
    },
    { when: () => true },
  )
  .openapi("ExecutionPlanTemplate", {
    description: "What to produce: the input, the outputs and the transforms. Unknown fields are removed.",
  });

export type ExecutionPlan = z.infer<typeof ExecutionPlanTemplateSchema>;

export const ExecutionPlanSchema = ExecutionPlanTemplateSchema.openapi("ExecutionPlan", {
  description: "The stored, normalised plan (defaults filled in, legacy codec and preset names replaced)",
});

const timestamp = (description: string) =>
  z.iso.datetime().openapi({ description, example: "2026-11-21T10:00:00.000Z" });
const nullableTimestamp = (description: string) =>
  z.iso.datetime().nullable().openapi({ description, example: null });

export const JobSchema = z
  .object({
    id: z.uuid().openapi({ example: "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d" }),
    organizationId: z
      .uuid()
      .openapi({ description: "Derived from projectId", example: "6f1c2a90-1d7e-4f39-8b7a-1f0e2d3c4b5a" }),
    projectId: z.uuid().openapi({ example: "2c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f" }),
    state: JobStateSchema,
    priority: z
      .number()
      .int()
      .min(-1000)
      .max(1000)
      .openapi({ description: "Higher is scheduled first", example: 0 }),
    workerPool: WorkerPoolSchema,
    requirements: z.object({
      requiredCapabilities: z.array(z.string()).openapi({ example: ["libx264"] }),
    }),
    currentAttemptId: z.uuid().openapi({ example: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d" }),
    currentAttempt: z.object({
      state: AttemptStateSchema,
      progress: z.number().nullable().openapi({
        description: "Percent; 0 before start, null while running until the Worker reports",
        example: 0,
      }),
    }),
    queuedAt: timestamp("When the job last entered the queue"),
    startedAt: nullableTimestamp("null until a Worker starts it"),
    completedAt: nullableTimestamp("null until completed"),
    createdAt: timestamp("Submission time"),
    updatedAt: timestamp("Last change"),
  })
  .openapi("Job");

export const AttemptSchema = z
  .object({
    id: z.uuid().openapi({ example: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d" }),
    attemptNumber: z.number().int().min(1).openapi({ example: 1 }),
    state: AttemptStateSchema,
    progress: z
      .number()
      .nullable()
      .openapi({ description: "Percent, or null until the Worker reports", example: 0 }),
    failureCode: z
      .string()
      .nullable()
      .openapi({ description: "DISPATCH_TIMEOUT, WORKER_LOST, or an execution failure code", example: null }),
    failureMessage: z.string().nullable().openapi({ example: null }),
    logsUri: z
      .string()
      .nullable()
      .openapi({ description: "s3:// location of the attempt's ffmpeg log", example: null }),
    encodingRecoveryCount: z.number().int().openapi({ example: 0 }),
    uploadRecoveryCount: z.number().int().openapi({ example: 0 }),
    uploadPausedAt: nullableTimestamp("First storage pause of this attempt"),
    uploadPauseExpiresAt: nullableTimestamp(
      "When kept outputs are discarded (24 h from the first pause, bounded by the job deadline)",
    ),
    uploadResumeRequestedAt: nullableTimestamp("Last resume-uploads request"),
    createdAt: timestamp("Creation time"),
    updatedAt: timestamp("Last change"),
  })
  .openapi("Attempt");

export const JobDetailSchema = JobSchema.extend({
  executionPlan: ExecutionPlanSchema,
  attempts: z.array(AttemptSchema).openapi({ description: "Every attempt, oldest first" }),
}).openapi("JobDetail");

export const JobListSchema = z
  .object({
    items: z.array(JobSchema),
    total: z.number().int().openapi({ description: "Jobs matching the filters", example: 1 }),
    limit: z.number().int().openapi({ example: 50 }),
    offset: z.number().int().openapi({ example: 0 }),
  })
  .openapi("JobList");

export const JobIdParamsSchema = z.object({
  jobId: z.uuid().openapi({
    param: { name: "jobId", in: "path" },
    example: "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d",
  }),
});

export type Job = z.infer<typeof JobSchema>;
export type JobDetail = z.infer<typeof JobDetailSchema>;
export type Attempt = z.infer<typeof AttemptSchema>;
