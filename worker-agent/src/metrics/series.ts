/**
 * Every series the Worker agent exports (besides the runtime's default process metrics), as
 * the one list the code, docs/observability.md and the tests read. Labels are bounded sets: never an
 * attempt, job or worker id (one Prometheus target is one Worker already).
 */

export interface SeriesSpec {
  type: "counter" | "gauge" | "histogram";
  help: string;
  labels: readonly string[];
}

export const RETRY_OPERATIONS = ["upload_part", "complete_upload", "report_publish", "registration"] as const;
export type RetryOperation = (typeof RETRY_OPERATIONS)[number];

export const ATTEMPT_OUTCOMES = ["succeeded", "failed", "cancelled"] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const WORKER_SERIES = {
  tjm_worker_active_attempts: {
    type: "gauge",
    help: "Attempts this agent holds now (encoding, uploading or waiting for storage).",
    labels: [],
  },
  tjm_worker_encode_fps: {
    type: "gauge",
    help: "Sum of the latest ffmpeg fps over the attempts encoding now (0 when idle).",
    labels: [],
  },
  tjm_worker_encoded_frames_total: {
    type: "counter",
    help: "Frames ffmpeg reported encoded.",
    labels: [],
  },
  tjm_worker_upload_bytes_total: {
    type: "counter",
    help: "Bytes uploaded to S3 in completed multipart parts.",
    labels: [],
  },
  tjm_worker_retries_total: {
    type: "counter",
    help: "Retries by operation: upload_part, complete_upload, report_publish, registration.",
    labels: ["operation"],
  },
  tjm_worker_storage_waits_total: {
    type: "counter",
    help: "Times an attempt entered WAITING_FOR_STORAGE (uploads paused until resume-uploads).",
    labels: [],
  },
  tjm_worker_waiting_for_storage: {
    type: "gauge",
    help: "Attempts waiting for storage now.",
    labels: [],
  },
  tjm_worker_waiting_for_input: {
    type: "gauge",
    help: "Attempts whose encode waits for storage to read its input now (the job stays RUNNING).",
    labels: [],
  },
  tjm_worker_attempts_total: {
    type: "counter",
    help: "Attempts ended here, by outcome: succeeded, failed, cancelled.",
    labels: ["outcome"],
  },
} as const satisfies Record<string, SeriesSpec>;

export type WorkerSeriesName = keyof typeof WORKER_SERIES;
