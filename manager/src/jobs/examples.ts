/** Whole-message examples for the OpenAPI document (field examples live on the schemas). */
import { movieOutput } from "@tjm/protocol";

export const submitJobExample = {
  projectId: "2c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f",
  priority: 10,
  requirements: { requiredCapabilities: ["libx264"] },
  executionPlan: {
    input: { uri: "s3://media-in/movies/42/source.mov" },
    outputs: [
      movieOutput("1080p", "mp4", "1080p.mp4", {
        video: { codec: "h264", height: 1080, preset: "slow" },
        audio: { codec: "aac", bitrateKbps: 192 },
      }),
      movieOutput("720p-webm", "webm", "720p.webm", {
        video: { codec: "vp9", height: 720 },
        audio: { codec: "opus", bitrateKbps: 128 },
      }),
    ],
    transforms: {
      removedSegments: [{ startMs: 0, endMs: 12000 }],
      subtitles: [{ uri: "s3://media-in/movies/42/en.srt", language: "en", mode: "SOFT" }],
      audioTracks: [{ streamIndex: 0, language: "en" }],
      watermark: {
        uri: "s3://media-in/brand/logo.png",
        position: "top-right",
        opacity: 0.8,
        widthPercent: 8,
      },
    },
    manifestUri: "s3://media-out/movies/42/manifest.json",
  },
};

export const jobExample = {
  id: "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d",
  organizationId: "6f1c2a90-1d7e-4f39-8b7a-1f0e2d3c4b5a",
  projectId: "2c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f",
  state: "QUEUED",
  priority: 10,
  workerPool: "cpu",
  requirements: { requiredCapabilities: ["libx264"] },
  currentAttemptId: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
  currentAttempt: { state: "CREATED", progress: 0 },
  queuedAt: "2026-11-21T10:00:00.000Z",
  startedAt: null,
  completedAt: null,
  createdAt: "2026-11-21T10:00:00.000Z",
  updatedAt: "2026-11-21T10:00:00.000Z",
};
