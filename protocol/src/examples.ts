/**
 * One realistic, valid instance of every message: the tests start from these, and the
 * Manager can show them as OpenAPI examples of its Worker-facing routes.
 */
import type {
  AcceptedReport,
  CancelCommand,
  CancelledReport,
  CompletedReport,
  DrainCommand,
  EncodedReport,
  FailedReport,
  Heartbeat,
  InputResumedReport,
  InputWaitingReport,
  LeaseCommand,
  OutputResult,
  Progress,
  RejectedReport,
  ResumeUploadsCommand,
  StartedReport,
  UndrainCommand,
  UploadPausedReport,
  UploadResumedReport,
  WorkerChallenge,
  WorkerChallengeRequest,
  WorkerCredentials,
  WorkerCredentialsRequest,
  WorkerRegistrationRequest,
  WorkerRegistrationResponse,
  WorkerReRegistrationRequest,
} from "./messages.ts";
import type { Container } from "./plan.ts";
import { PROTOCOL_VERSION } from "./version.ts";

const protocolVersion = PROTOCOL_VERSION;
const workerId = "3f2b8c1e-7d4a-4e59-9b2c-6a1d0e8f7c35";
const instanceId = "c81a5f0d-2e3b-4c7a-8d91-0f6e4b2a9d17";
const jobId = "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d";
const attemptId = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
const fencingToken = "2";
const attempt = { workerId, instanceId, attemptId, fencingToken, sentAt: "2026-11-21T10:00:05.120Z" };
/** What every report on the example attempt carries besides its type. */
const onAttempt = { protocolVersion, ...attempt } as const;

/** An output of the example movie (number 42), stored in its folder as `file`. */
export function movieOutput<Video, Audio>(
  id: string,
  container: Container,
  file: string,
  encoding: { video: Video; audio: Audio },
) {
  return {
    id,
    kind: "FILE" as const,
    container,
    destinationUri: `s3://media-out/movies/42/${file}`,
    video: encoding.video,
    audio: encoding.audio,
  };
}

const userJwt =
  "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJVRFhVNFJDU0pOWk9JUUhaTldYSFhPUkRQUlRHTkpBSEFIRlJHWk5FRUpDUFFUVDJNN05MQ05GNCJ9.c2lnbmF0dXJl";

const probe: WorkerRegistrationRequest["probe"] = {
  ffmpegVersion: "7.1.1-1+b1",
  capabilities: [
    "libx264",
    "libx265",
    "libsvtav1",
    "libvpx-vp9",
    "aac",
    "libopus",
    "h264",
    "scale",
    "overlay",
  ],
  hardwareEncoders: [
    { name: "h264_vaapi", status: "FAILED", reason: "no VA-API device at /dev/dri/renderD128" },
  ],
  certification: { status: "READY", reasons: [] },
  capacity: 8,
};

const workerRegistrationRequest: WorkerRegistrationRequest = {
  protocolVersion,
  enrollmentToken: "tjm_et_Xq3vN8bQ2mK7pL4rT9wY1zA6cE5fG0hJ2kM8nP3sU7v",
  publicKey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4",
  name: "encoder-cpu-01",
  pool: "cpu",
  capacityCap: 4,
  probe,
};

const workerRegistrationResponse: WorkerRegistrationResponse = {
  protocolVersion,
  workerId,
  instanceId,
  natsUrl: "nats://nats.internal:4222",
  subjectPrefix: "tjm",
  userJwt,
  userJwtExpiresAt: "2026-11-21T11:00:00.000Z",
  heartbeatIntervalMs: 5000,
};

const workerChallengeRequest: WorkerChallengeRequest = {
  protocolVersion,
  workerId,
  purpose: "re-registration",
};

const workerChallenge: WorkerChallenge = {
  protocolVersion,
  challengeId: "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a",
  purpose: "re-registration",
  nonce: "MDI4K4xpEpiLnHMP99xJcGCaG7S9jFA-cYaBGLoT_ac",
  expiresAt: "2026-11-21T10:01:00.000Z",
};

const signature = "DdrTAyJocJ2KT9Do9s0StGoAXN6OcqakItu8sH9_OGHHglhA93qxmO58PqHk91-TjiIO8t0Cs2K6CZmFeozGBw";

const workerReRegistrationRequest: WorkerReRegistrationRequest = {
  protocolVersion,
  workerId,
  challengeId: workerChallenge.challengeId,
  signature,
  name: "encoder-cpu-01",
  pool: "cpu",
  capacityCap: 4,
  probe,
  resumableAttempts: [],
};

const workerCredentialsRequest: WorkerCredentialsRequest = {
  protocolVersion,
  workerId,
  instanceId,
  challengeId: "6e5d4c3b-2a1f-4e0d-9c8b-7a6f5e4d3c2b",
  signature,
};

const workerCredentials: WorkerCredentials = {
  protocolVersion,
  userJwt,
  userJwtExpiresAt: "2026-11-21T12:00:00.000Z",
};

const heartbeat: Heartbeat = {
  protocolVersion,
  workerId,
  instanceId,
  sentAt: "2026-11-21T10:00:05.000Z",
  activeAttempts: [{ attemptId, fencingToken }],
  freeCapacity: 3,
};

const progress: Progress = {
  protocolVersion,
  workerId,
  instanceId,
  attemptId,
  fencingToken,
  percent: 42.5,
  fps: 118.4,
  bitrateKbps: 2431.7,
  speed: 3.95,
  etaSeconds: 6.1,
  outTimeMs: 8_500,
  at: "2026-11-21T10:00:07.500Z",
};

const lease: LeaseCommand = {
  type: "lease",
  protocolVersion,
  attemptId,
  jobId,
  fencingToken,
  attemptNumber: 1,
  plan: {
    input: { uri: "s3://media-in/movies/42/source.mov" },
    outputs: [
      movieOutput("720p", "mp4", "720p.mp4", {
        video: { codec: "h264", height: 720, preset: "medium" },
        audio: { codec: "aac", bitrateKbps: 128 },
      }),
    ],
    transforms: { removedSegments: [{ startMs: 0, endMs: 15000 }], subtitles: [], audioTracks: [] },
  },
  storage: {
    endpoint: "http://127.0.0.1:9000",
    region: "us-east-1",
    accessKeyId: "tjm-worker",
    secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    forcePathStyle: true,
    checksums: "WHEN_REQUIRED",
  },
  workDirectory: "/var/lib/tjm/work",
  commit: "copy",
  uploads: [
    {
      outputId: "720p",
      uri: `s3://media-out/.tjm-staging/${jobId}/${attemptId}/720p`,
    },
  ],
  logsUri: `s3://media-out/.tjm-logs/${jobId}/attempt-1.log`,
  dispatchDeadline: "2026-11-21T10:00:35.000Z",
};

const cancel: CancelCommand = { type: "cancel", protocolVersion, attemptId, fencingToken };
const resumeUploads: ResumeUploadsCommand = {
  type: "resume-uploads",
  protocolVersion,
  attemptId,
  fencingToken,
};
const drain: DrainCommand = { type: "drain", protocolVersion };
const undrain: UndrainCommand = { type: "undrain", protocolVersion };

const accepted: AcceptedReport = { type: "accepted", ...onAttempt };
const rejected: RejectedReport = {
  type: "rejected",
  ...onAttempt,
  reason: "the Worker is draining",
};
const started: StartedReport = { type: "started", ...onAttempt };
const encoded: EncodedReport = { type: "encoded", ...onAttempt };
const uploadPaused: UploadPausedReport = {
  type: "upload-paused",
  ...onAttempt,
  reason: "connect ECONNREFUSED 127.0.0.1:9000 after 5 tries",
  pausedAt: "2026-11-21T10:00:05.000Z",
};
const uploadResumed: UploadResumedReport = { type: "upload-resumed", ...onAttempt };
const inputWaiting: InputWaitingReport = {
  type: "input-waiting",
  ...onAttempt,
  since: "2026-11-21T10:00:03.000Z",
  lastError:
    "stream s3://media-in/movies/42/source.mov: storage unavailable after 5 attempt(s): Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9000",
};
const inputResumed: InputResumedReport = { type: "input-resumed", ...onAttempt };
const completed: CompletedReport = {
  type: "completed",
  ...onAttempt,
  outputs: [
    {
      id: "720p",
      uri: `s3://media-out/.tjm-staging/${jobId}/${attemptId}/720p`,
      bytes: 5_242_880,
      sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      durationMs: 5_000,
      codecs: ["h264", "aac"],
      widthPx: 1280,
      heightPx: 720,
    },
  ],
  logsUri: `s3://media-out/.tjm-logs/${jobId}/attempt-1.log`,
};
/** Under a "multipart" lease: the upload left incomplete at the destination, for the Manager to complete. */
const completedMultipart: CompletedReport = {
  ...completed,
  outputs: [
    {
      ...(completed.outputs[0] as OutputResult),
      uri: "s3://media-out/movies/42/720p.mp4",
      bytes: 5_243_904,
      multipart: {
        uploadId: "ZjA0NWM2ZjMtMGE4Ny00YjAxLTlkMDgtN2E1NGE2M2YxYjQ4",
        parts: [
          { partNumber: 1, etag: '"5f363e0e58a95f06cbe9bbc662c5dfb6"', bytes: 5_242_880 },
          { partNumber: 2, etag: '"0f343b0931126a20f133d67c2b018a3b"', bytes: 1_024 },
        ],
      },
    },
  ],
};
const failed: FailedReport = {
  type: "failed",
  ...onAttempt,
  failureCode: "INPUT_UNREADABLE",
  failureMessage:
    "ffmpeg exited with code 1:\ns3://media-in/movies/42/source.mov: Invalid data found when processing input",
  logsUri: "s3://media-out/movies/42/logs/attempt-1.log",
};
const cancelled: CancelledReport = { type: "cancelled", ...onAttempt };

export const examples = {
  workerRegistrationRequest,
  workerRegistrationResponse,
  workerChallengeRequest,
  workerChallenge,
  workerReRegistrationRequest,
  workerCredentialsRequest,
  workerCredentials,
  heartbeat,
  progress,
  commands: { lease, cancel, resumeUploads, drain, undrain },
  reports: {
    accepted,
    rejected,
    started,
    encoded,
    uploadPaused,
    uploadResumed,
    inputWaiting,
    inputResumed,
    completed,
    completedMultipart,
    failed,
    cancelled,
  },
};
