import { z } from "@hono/zod-openapi";
import {
  ExecutionPlanSchema,
  PlanAudioSchema,
  PlanOutputSchema,
  PlanTransformsSchema,
  PlanVideoSchema,
  PlanWatermarkSchema,
  PORTABLE_VIDEO_CODECS,
  planOutputList,
  VIDEO_PRESETS,
} from "@tjm/protocol";
import { ATTEMPT_STATES, JOB_STATES } from "../lifecycle/index.ts";
import { pageOf } from "../platform/query.ts";
import { jsonResponse, uuidPathParam } from "../platform/routes.ts";
import {
  LEGACY_VIDEO_CODECS,
  normaliseVideoCodec,
  normaliseVideoPreset,
  planRuleIssues,
  presetAliasTable,
  VIDEO_PRESET_ALIASES,
  WORKER_POOLS,
} from "./plan.ts";

export const JobStateSchema = z.enum(JOB_STATES).openapi("JobState", { example: "QUEUED" });
export const AttemptStateSchema = z.enum(ATTEMPT_STATES).openapi("AttemptState", { example: "CREATED" });
export const WorkerPoolSchema = z
  .enum(WORKER_POOLS)
  .openapi("WorkerPool", { description: "Kind of Worker host a job runs on", example: "cpu" });

// The template is the protocol's ExecutionPlan (@tjm/protocol) widened where the API accepts
// more than the plan holds: codec and preset aliases, and defaults. Parsing it yields an
// ExecutionPlan (schema.test.ts holds it to that).

const OutputVideo = PlanVideoSchema.extend({
  codec: z
    .enum([...PORTABLE_VIDEO_CODECS, ...LEGACY_VIDEO_CODECS])
    // Called, not passed, so the overload that returns a portable codec applies.
    .transform((codec) => normaliseVideoCodec(codec))
    .openapi({
      description:
        "Portable codec intent; the Worker picks its pool's encoder. The legacy encoder names libx264, h264_nvenc and h264_qsv are accepted and stored as h264.",
      example: "h264",
    }),
  preset: z
    .enum([...VIDEO_PRESETS, ...VIDEO_PRESET_ALIASES])
    .default("medium")
    .transform(normaliseVideoPreset)
    .openapi({
      description: `Portable speed/quality trade-off, mapped to each encoder's presets. The x264/x265 preset names and NVENC's p1..p7 are accepted and stored as the portable name they fall in (a portable name always means itself):\n\n${presetAliasTable()}`,
      example: "medium",
    }),
}).openapi("OutputVideo");

const OutputAudio = PlanAudioSchema.extend({
  bitrateKbps: PlanAudioSchema.shape.bitrateKbps.default(128),
}).openapi("OutputAudio");

const Output = PlanOutputSchema.extend({
  video: OutputVideo.optional(),
  audio: OutputAudio.optional(),
}).openapi("Output");

const watermark = PlanWatermarkSchema.shape;
const Watermark = PlanWatermarkSchema.extend({
  position: watermark.position.default("bottom-right"),
  marginPx: watermark.marginPx.default(16),
  opacity: watermark.opacity.default(1),
}).openapi("Watermark");

const transforms = PlanTransformsSchema.shape;
const Transforms = PlanTransformsSchema.extend({
  removedSegments: transforms.removedSegments.default([]),
  subtitles: transforms.subtitles.default([]),
  audioTracks: transforms.audioTracks.default([]),
  watermark: Watermark.optional(),
}).openapi("Transforms");

export const ExecutionPlanTemplateSchema = ExecutionPlanSchema.extend({
  outputs: planOutputList(Output),
  transforms: Transforms.default({ removedSegments: [], subtitles: [], audioTracks: [] }),
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
    queuedAt: timestamp(
      "When the job entered the queue: its submission or an operator's retry. A next attempt after a Worker's failure (DISPATCH_TIMEOUT, WORKER_LOST …) keeps it, and so keeps the job's place in the queue",
    ),
    startedAt: nullableTimestamp(
      "When a Worker first had the job in this run (kept through next attempts, null again after a retry); null until a Worker starts it",
    ),
    completedAt: nullableTimestamp("null until completed"),
    createdAt: timestamp("Submission time"),
    updatedAt: timestamp("Last change"),
  })
  .openapi("Job");

export const WaitingForInputSchema = z
  .object({
    since: timestamp("When the wait started: the store had stopped answering for the Worker's retry budget"),
    lastError: z.string().openapi({
      description: "The store's last failure as the Worker saw it",
      example:
        "stream s3://media-in/clips/long.mp4: storage unavailable after 5 attempt(s): Error ECONNREFUSED: connect ECONNREFUSED 10.0.0.12:9000",
    }),
  })
  .openapi("WaitingForInput");

export const AttemptSchema = z
  .object({
    id: z.uuid().openapi({ example: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d" }),
    attemptNumber: z.number().int().min(1).openapi({ example: 1 }),
    state: AttemptStateSchema,
    progress: z
      .number()
      .nullable()
      .openapi({ description: "Percent, or null until the Worker reports", example: 0 }),
    workerId: z.uuid().nullable().openapi({
      description: "The Worker the attempt was leased to; null until it is dispatched",
      example: "3f2b8c1e-7d4a-4e59-9b2c-6a1d0e8f7c35",
    }),
    startedAt: nullableTimestamp("When the Worker started it; null for an attempt that never started"),
    endedAt: nullableTimestamp("When it reached SUCCEEDED, FAILED or CANCELLED; null until then"),
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
    waitingForInput: WaitingForInputSchema.nullable().openapi({
      description:
        "Set while the attempt (RUNNING, and so its job) waits for storage to read its input: the encode is held where it stopped and goes on when the store answers, with no new attempt. null otherwise",
    }),
    createdAt: timestamp("Creation time"),
    updatedAt: timestamp("Last change"),
  })
  .openapi("Attempt");

export const JobOutputSchema = z
  .object({
    id: z.string().openapi({ description: "The plan's output id", example: "720p" }),
    uri: z.string().openapi({ description: "Its destination", example: "s3://media-out/movies/42/720p.mp4" }),
    bytes: z.number().int().openapi({ example: 5242880 }),
    sha256: z
      .string()
      .openapi({ example: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" }),
    durationMs: z.number().int().openapi({ example: 5000 }),
    codecs: z.array(z.string()).openapi({ description: "As ffprobe names them", example: ["h264", "aac"] }),
    widthPx: z.number().int().nullable().openapi({
      description: "null for an audio-only output (or from a Worker that did not say)",
      example: 1280,
    }),
    heightPx: z.number().int().nullable().openapi({ example: 720 }),
  })
  .openapi("JobOutput");

export const JobDetailSchema = JobSchema.extend({
  executionPlan: ExecutionPlanSchema,
  attempts: z.array(AttemptSchema).openapi({ description: "Every attempt, oldest first" }),
  outputs: z.array(JobOutputSchema).openapi({
    description:
      "What the job produced, from its completed attempt's report, at their destinations; empty until the job is COMPLETED",
  }),
  manifest: z.record(z.string(), z.unknown()).nullable().openapi({
    description:
      "The manifest written to executionPlan.manifestUri, as written; null until the job is COMPLETED and for plans without a manifestUri",
    example: null,
  }),
}).openapi("JobDetail");

export const AttemptLogParamsSchema = z.object({
  jobId: uuidPathParam("jobId", "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d"),
  attemptId: uuidPathParam("attemptId", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"),
});

export const AttemptLogSchema = z
  .object({
    jobId: z.uuid().openapi({ example: "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d" }),
    attemptId: z.uuid().openapi({ example: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d" }),
    logsUri: z.string().openapi({ example: "s3://media-out/.tjm-logs/0b7e7a4e/attempt-1.log" }),
    totalBytes: z.number().int().openapi({ description: "The whole log's size", example: 183204 }),
    truncated: z.boolean().openapi({
      description: "true when the log is longer than the tail: `text` then starts at a line boundary",
      example: true,
    }),
    text: z.string().openapi({
      description: "The log's last 64 KiB at most (UTF-8; an invalid sequence becomes U+FFFD)",
      example:
        "frame=  125 fps= 48 q=-1.0 Lsize=     412kB time=00:00:05.00 bitrate= 675.2kbits/s speed=1.9x\n",
    }),
  })
  .openapi("AttemptLog");

export const JobListSchema = pageOf("JobList", JobSchema, "Jobs matching the filters");

export const JobIdParamsSchema = z.object({
  jobId: uuidPathParam("jobId", "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d"),
});

/** The answer of an operation on a job: 202 with the job's detail. */
export const jobDetailAccepted = (description: string) => ({
  202: jsonResponse(description, JobDetailSchema),
});

export type Job = z.infer<typeof JobSchema>;
export type JobDetail = z.infer<typeof JobDetailSchema>;
export type Attempt = z.infer<typeof AttemptSchema>;
export type JobOutput = z.infer<typeof JobOutputSchema>;
export type AttemptLog = z.infer<typeof AttemptLogSchema>;
