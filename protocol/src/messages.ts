/**
 * Every message of the Manager <-> Worker contract as a zod schema, with its inferred type.
 * Receivers parse each message with its schema (decodeMessage in codec.ts) and drop what
 * fails, so every string, array and number is bounded here: an oversized or out-of-range
 * message is invalid, not merely large. The bounds are chosen so that any message a schema
 * accepts encodes within MAX_MESSAGE_BYTES (a test builds the largest ones).
 *
 * Conventions: every message carries `protocolVersion`; ids are lowercase UUIDs (uuid.ts);
 * fencing tokens are decimal strings, because they are bigint in PostgreSQL and a JSON
 * number loses precision past 2^53; timestamps are ISO 8601 in UTC ("…Z"). Unknown fields
 * are removed, not refused.
 */
import type { StorageSettings as StorageClientSettings } from "@tjm/storage";
import { z } from "zod";
import { messageLimits } from "./limits.ts";
import { ExecutionPlanSchema } from "./plan.ts";
import { WORKER_POOLS } from "./pools.ts";
import { PREFIX_PATTERN } from "./subjects.ts";
import { UUID_PATTERN } from "./uuid.ts";
import { PROTOCOL_VERSION } from "./version.ts";

export { messageLimits };

const limits = messageLimits;

// ---- building blocks -------------------------------------------------------------------

const protocolVersion = z.literal(PROTOCOL_VERSION, {
  error: `must be ${PROTOCOL_VERSION}, the protocol version this side speaks`,
});

export const UuidSchema = z.string().regex(UUID_PATTERN, "must be a lowercase UUID");

const POSTGRES_BIGINT_MAX = 9_223_372_036_854_775_807n;

const DECIMAL_POSITIVE_INTEGER = /^[1-9][0-9]{0,18}$/;

/** Canonical (no leading zeros), so two tokens are equal exactly when their strings are. */
export const FencingTokenSchema = z
  .string()
  .regex(DECIMAL_POSITIVE_INTEGER, "must be a positive integer written in decimal without leading zeros")
  // zod runs this check even when the pattern failed, so it must not hand BigInt a non-number.
  .refine(
    (token) => !DECIMAL_POSITIVE_INTEGER.test(token) || BigInt(token) <= POSTGRES_BIGINT_MAX,
    "must fit in a PostgreSQL bigint",
  );

/** UTC only ("…Z"); the length bound caps the fractional digits, which ISO 8601 leaves open. */
export const TimestampSchema = z.iso.datetime().max(limits.timestampLength);

// Control characters garble logs and terminals; PostgreSQL's jsonb refuses an unpaired
// surrogate. Without either, a character of text takes at most 3 bytes of JSON, which the
// size bounds rely on.
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL_CHARACTER_BUT_TAB_OR_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f]/;
const LONE_SURROGATE = /\p{Cs}/u;

const line = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine(
      (text) => !CONTROL_CHARACTER.test(text) && !LONE_SURROGATE.test(text),
      "must be one line without control characters or unpaired surrogates",
    );

const paragraph = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine(
      (text) => !CONTROL_CHARACTER_BUT_TAB_OR_NEWLINE.test(text) && !LONE_SURROGATE.test(text),
      "must be text without control characters (other than tab and newline) or unpaired surrogates",
    );

/** An ffmpeg component name (libx264, h264_nvenc, scale_cuda, aac …). */
const nameToken = z
  .string()
  .regex(
    new RegExp(`^[A-Za-z0-9_.:+-]{1,${limits.nameTokenLength}}$`),
    `must be 1 to ${limits.nameTokenLength} letters, digits, '_', '.', ':', '+' or '-'`,
  );

const capacity = z.number().int().min(0).max(limits.capacityMax);

const s3Uri = z
  .string()
  .max(limits.urlLength)
  .regex(/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\/./, "must be an s3://bucket/key URI")
  .refine(
    (uri) => !CONTROL_CHARACTER.test(uri) && !LONE_SURROGATE.test(uri),
    "must not hold control characters or unpaired surrogates",
  );

const absolutePath = z
  .string()
  .max(limits.pathLength)
  .refine((path) => path.startsWith("/"), "must be an absolute path")
  .refine((path) => !path.split("/").includes(".."), "must not contain '..' segments")
  .refine(
    (path) => !CONTROL_CHARACTER.test(path) && !LONE_SURROGATE.test(path),
    "must not hold control characters or unpaired surrogates",
  );

const base64url = (min: number, max: number) =>
  z
    .string()
    .regex(
      new RegExp(`^[A-Za-z0-9_-]{${min},${max}}$`),
      `must be ${min === max ? min : `${min} to ${max}`} base64url characters without padding`,
    );

export const WorkerPoolSchema = z.enum(WORKER_POOLS);

// ---- registration ----------------------------------------------------------------------

/** What identifies one attempt's lease: reports, progress and heartbeats carry it. */
const attemptFence = { attemptId: UuidSchema, fencingToken: FencingTokenSchema };

export const HardwareEncoderProbeSchema = z.discriminatedUnion("status", [
  z.object({ name: nameToken, status: z.literal("PASSED") }),
  z.object({ name: nameToken, status: z.literal("FAILED"), reason: line(limits.reasonLength) }),
]);

const reasons = z.array(line(limits.reasonLength)).max(limits.reasons);

export const CertificationSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("READY"), reasons }),
  z.object({ status: z.literal("DEGRADED"), reasons: reasons.min(1, "a DEGRADED certification says why") }),
]);

/** What the Worker's ffmpeg can do, from `ffmpeg -version/-encoders/…` and encoder self-tests. */
export const ProbeReportSchema = z.object({
  ffmpegVersion: line(limits.ffmpegVersionLength),
  capabilities: z.array(nameToken).max(limits.capabilities),
  /** Every hardware encoder ffmpeg lists, with the result of its one-frame self-test. */
  hardwareEncoders: z.array(HardwareEncoderProbeSchema).max(limits.hardwareEncoders),
  certification: CertificationSchema,
  /** What the host supports (CPU cores, NVENC sessions), before the configured cap. */
  capacity,
});

/** The description a Worker gives of itself on every (re-)registration; a restart may follow an ffmpeg or hardware change. */
const workerDescription = {
  name: line(limits.workerNameLength),
  pool: WorkerPoolSchema,
  /** The operator's cap (WORKER_CAPACITY) on concurrent attempts; the Worker takes min(probe.capacity, cap). */
  capacityCap: capacity.min(1).nullable(),
  probe: ProbeReportSchema,
};

export const WorkerRegistrationRequestSchema = z.object({
  protocolVersion,
  enrollmentToken: z
    .string()
    .min(limits.enrollmentTokenLengthMin)
    .max(limits.enrollmentTokenLengthMax)
    .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces"),
  /** The Worker's NKey; its seed never leaves the Worker's host. The Manager checks the checksum. */
  publicKey: z
    .string()
    .regex(/^U[A-Z2-7]{55}$/, "must be an NKey user public key: 'U' and 55 base32 characters"),
  ...workerDescription,
});

const userJwt = z
  .string()
  .max(limits.userJwtLength)
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, "must be a JWT");

/**
 * The NATS credentials of a Worker: a user JWT for its public key, signed with the account
 * signing key, or both null when the Manager runs NATS without authentication (NATS_AUTH=none).
 */
const natsCredentials = {
  userJwt: userJwt.nullable(),
  /** Refresh (POST /api/v1/worker/credentials) well before this; the server disconnects at expiry. */
  userJwtExpiresAt: TimestampSchema.nullable(),
};

const natsServerUrl = z.url({ protocol: /^(nats|tls|ws|wss)$/, hostname: /./ });

/**
 * The NATS servers a Worker connects to: one URL, or several comma-separated (the servers of
 * a cluster; the client fails over between them). A string rather than an array, so that the
 * single-server answer is the one every agent already reads.
 */
const natsServerList = z
  .string()
  .max(limits.urlLength)
  .regex(/^[a-z]+:\/\/[^,\s]+(,[a-z]+:\/\/[^,\s]+)*$/, "must be NATS URLs separated by commas")
  .refine(
    (list) => list.split(",").every((url) => natsServerUrl.safeParse(url).success),
    "each server must be a nats, tls, ws or wss URL with a host",
  );

export const WorkerRegistrationResponseSchema = z.object({
  protocolVersion,
  workerId: UuidSchema,
  /** New on every (re-)registration; heartbeats from an older instance are ignored. */
  instanceId: UuidSchema,
  natsUrl: natsServerList,
  /** Prefix of every subject (subjects.ts); "tjm" unless the Manager is configured otherwise. */
  subjectPrefix: z.string().regex(PREFIX_PATTERN, "must be a subject prefix"),
  ...natsCredentials,
  heartbeatIntervalMs: z.number().int().min(limits.heartbeatIntervalMsMin).max(limits.heartbeatIntervalMsMax),
  /**
   * On re-registration: of the attempts the Worker offered to finish from disk, those still its
   * own (current, held, same fencing token). It drops the others: the Manager failed them while
   * it was away, or already completed them. Absent from older Managers: keep them all.
   */
  resumedAttemptIds: z.array(UuidSchema).max(1000).optional(),
});

/** What a Worker proves possession of its NKey for: a new instance, or fresh NATS credentials. */
export const CHALLENGE_PURPOSES = ["re-registration", "credentials"] as const;
export const ChallengePurposeSchema = z.enum(CHALLENGE_PURPOSES);

/** A Worker asks for a nonce to prove it still holds the NKey it registered with. */
export const WorkerChallengeRequestSchema = z.object({
  protocolVersion,
  workerId: UuidSchema,
  purpose: ChallengePurposeSchema,
});

export const WorkerChallengeSchema = z.object({
  protocolVersion,
  challengeId: UuidSchema,
  purpose: ChallengePurposeSchema,
  /** At least 16 random bytes, base64url. */
  nonce: base64url(22, 128),
  expiresAt: TimestampSchema,
});

/** The 64-byte Ed25519 signature of challengeSigningInput(…) (challenge.ts), base64url without padding. */
const challengeSignature = base64url(86, 86);

/** Answers a re-registration challenge: a restarted Worker gets a new instance and credentials. */
export const WorkerReRegistrationRequestSchema = z.object({
  protocolVersion,
  workerId: UuidSchema,
  challengeId: UuidSchema,
  signature: challengeSignature,
  ...workerDescription,
  /**
   * Attempts the previous instance left on disk that this one can finish (encoded outputs and
   * upload state kept in WORKER_WORK_DIR). The Manager hands them to the new instance; every
   * other attempt the Worker held fails with WORKER_LOST.
   */
  resumableAttempts: z.array(z.object(attemptFence)).max(limits.capacityMax),
});

/** Answers a credentials challenge: the running instance gets a fresh user JWT before its own expires. */
export const WorkerCredentialsRequestSchema = z.object({
  protocolVersion,
  workerId: UuidSchema,
  instanceId: UuidSchema,
  challengeId: UuidSchema,
  signature: challengeSignature,
});

export const WorkerCredentialsSchema = z.object({ protocolVersion, ...natsCredentials });

// ---- heartbeat and progress (core NATS) --------------------------------------------------

export const HeartbeatSchema = z.object({
  protocolVersion,
  workerId: UuidSchema,
  instanceId: UuidSchema,
  sentAt: TimestampSchema,
  activeAttempts: z.array(z.object(attemptFence)).max(limits.capacityMax),
  freeCapacity: capacity,
});

/** ffmpeg reports some figures as N/A (no video, too early): those are null. */
export const ProgressSchema = z.object({
  protocolVersion,
  workerId: UuidSchema,
  instanceId: UuidSchema,
  ...attemptFence,
  percent: z.number().min(0).max(100),
  fps: z.number().min(0).max(limits.fpsMax).nullable(),
  bitrateKbps: z.number().min(0).max(limits.bitrateKbpsMax).nullable(),
  speed: z.number().min(0).max(limits.speedMax).nullable(),
  etaSeconds: z
    .number()
    .min(0)
    .max(limits.durationMsMax / 1000)
    .nullable(),
  outTimeMs: z.number().int().min(0).max(limits.durationMsMax),
  at: TimestampSchema,
});

// ---- commands (<PREFIX>_COMMANDS, Manager -> Worker) -------------------------------------

/** The job's normalised plan (plan.ts), bounded in size as sent, unknown fields included. */
export const LeasePlanSchema = z
  .unknown()
  .refine(
    (plan) => jsonBytes(plan) <= limits.planBytes,
    `must serialise as JSON in at most ${limits.planBytes} bytes`,
  )
  .pipe(ExecutionPlanSchema);

const utf8 = new TextEncoder();

/** Infinity for a value JSON cannot hold (a cycle, a bigint), so the bound refuses it. */
function jsonBytes(value: unknown): number {
  try {
    return utf8.encode(JSON.stringify(value)).byteLength;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

export const StorageSettingsSchema = z.object({
  endpoint: z.url({ protocol: /^https?$/, hostname: /./ }).max(limits.urlLength),
  region: line(limits.storageRegionLength),
  accessKeyId: line(limits.storageAccessKeyIdLength),
  secretAccessKey: line(limits.storageSecretAccessKeyLength),
  forcePathStyle: z.boolean(),
  /**
   * The AWS SDK's requestChecksumCalculation and responseChecksumValidation. WHEN_SUPPORTED
   * (the SDK's default) sends aws-chunked bodies that some S3-compatible servers store
   * verbatim; WHEN_REQUIRED works everywhere.
   */
  checksums: z.enum(["WHEN_REQUIRED", "WHEN_SUPPORTED"]),
  /** Parts per multipart upload the store accepts (S3_MAX_PARTS); absent: S3's 10,000. */
  maxParts: z.number().int().min(1).max(10_000).optional(),
}) satisfies z.ZodType<StorageClientSettings>; // what @tjm/storage builds its client from

export const LeaseCommandSchema = z.object({
  type: z.literal("lease"),
  protocolVersion,
  ...attemptFence,
  jobId: UuidSchema,
  attemptNumber: z.number().int().min(1).max(1_000_000),
  plan: LeasePlanSchema,
  storage: StorageSettingsSchema,
  /** The plan's workspace.rootDirectory, or null for the Worker's own WORKER_WORK_DIR. */
  workDirectory: absolutePath.nullable(),
  /**
   * How an output reaches its destination, fixed by the Manager's S3_COMMIT setting (never
   * guessed from the store): "copy", the Worker completes its upload at an attempt-scoped
   * staging key and the Manager copies it to the destinationUri; "multipart", the Worker
   * uploads at the destinationUri itself, leaves the upload incomplete and reports its part
   * list, and the Manager completes it. Either way only the Manager makes an output visible
   * at its destination, after accepting the attempt's completion (the fencing check), so a
   * stale attempt can never overwrite a newer one's output.
   */
  commit: z.enum(["copy", "multipart"]),
  /** Where this attempt uploads each output: its staging key (copy) or its destinationUri (multipart). */
  uploads: z
    .array(z.object({ outputId: z.string().min(1).max(64), uri: s3Uri }))
    .min(1)
    .max(limits.outputs),
  /** Where the attempt's ffmpeg log goes (attempt-scoped, so attempts never share it). */
  logsUri: s3Uri,
  /** Answer `accepted` before this, or the Manager fails the attempt with DISPATCH_TIMEOUT. */
  dispatchDeadline: TimestampSchema,
});

export const CancelCommandSchema = z.object({ type: z.literal("cancel"), protocolVersion, ...attemptFence });

export const ResumeUploadsCommandSchema = z.object({
  type: z.literal("resume-uploads"),
  protocolVersion,
  ...attemptFence,
});

export const DrainCommandSchema = z.object({ type: z.literal("drain"), protocolVersion });

/** An operator resumed a draining or drained Worker: it takes leases again. */
export const UndrainCommandSchema = z.object({ type: z.literal("undrain"), protocolVersion });

export const CommandSchema = z.discriminatedUnion("type", [
  LeaseCommandSchema,
  CancelCommandSchema,
  ResumeUploadsCommandSchema,
  DrainCommandSchema,
  UndrainCommandSchema,
]);

/**
 * Commands travel through the Manager's outbox, which wraps every row in the same envelope
 * as events: `id` (the outbox row's message id, a UUID no other database repeats, also the
 * JetStream Nats-Msg-Id) lets the Worker drop a redelivered command it already handled.
 */
export const CommandEnvelopeSchema = z.object({
  id: UuidSchema,
  kind: z.literal("worker.command"),
  occurredAt: TimestampSchema,
  data: CommandSchema,
});

// ---- reports (<PREFIX>_REPORTS, Worker -> Manager) ---------------------------------------

const reportFields = {
  protocolVersion,
  workerId: UuidSchema,
  instanceId: UuidSchema,
  ...attemptFence,
  sentAt: TimestampSchema,
};

export const AcceptedReportSchema = z.object({ type: z.literal("accepted"), ...reportFields });

/** The Worker will not run the lease (draining, full, past its dispatch deadline); the Manager queues the next attempt. */
export const RejectedReportSchema = z.object({
  type: z.literal("rejected"),
  ...reportFields,
  reason: line(limits.reasonLength),
});
export const StartedReportSchema = z.object({ type: z.literal("started"), ...reportFields });
export const EncodedReportSchema = z.object({ type: z.literal("encoded"), ...reportFields });

export const UploadPausedReportSchema = z.object({
  type: z.literal("upload-paused"),
  ...reportFields,
  reason: line(limits.reasonLength),
  pausedAt: TimestampSchema,
});

/** After resume-uploads: the Worker is uploading the kept outputs again. */
export const UploadResumedReportSchema = z.object({ type: z.literal("upload-resumed"), ...reportFields });

/**
 * The attempt's reads of its input (the stream ffmpeg encodes from, a download, a subtitle or
 * watermark) spent their retry budget and wait for storage; ffmpeg is held on its read. Sent
 * when the wait starts and again when its last error changes (at most once a minute).
 */
export const InputWaitingReportSchema = z.object({
  type: z.literal("input-waiting"),
  ...reportFields,
  /** When the wait started. */
  since: TimestampSchema,
  lastError: line(limits.reasonLength),
});

/** The store answered again: the attempt's encode goes on where it stopped. */
export const InputResumedReportSchema = z.object({ type: z.literal("input-resumed"), ...reportFields });

export const OutputResultSchema = z.object({
  /** The plan's output id. */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be a plan output id"),
  uri: s3Uri,
  bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hexadecimal digits"),
  durationMs: z.number().int().min(0).max(limits.durationMsMax),
  codecs: z.array(nameToken).max(limits.codecsPerOutput),
  /** The video stream's size as ffprobe reads it; absent for audio-only outputs (and from older Workers). */
  widthPx: z.number().int().min(1).max(limits.frameSizeMax).optional(),
  heightPx: z.number().int().min(1).max(limits.frameSizeMax).optional(),
  /**
   * Under a "multipart" lease: the upload at `uri` (the destination), left incomplete for the
   * Manager to complete with exactly these parts, in part order; their sizes add up to `bytes`.
   */
  multipart: z
    .object({
      uploadId: z
        .string()
        .regex(
          new RegExp(`^[\\x21\\x23-\\x5b\\x5d-\\x7e]{1,${limits.uploadIdLength}}$`),
          `must be 1 to ${limits.uploadIdLength} printable ASCII characters other than '"' and '\\'`,
        ),
      parts: z
        .array(
          z.object({
            partNumber: z.number().int().min(1).max(10_000),
            /** As the store answered UploadPart: an entity tag, quotes included. */
            etag: z
              .string()
              .regex(
                new RegExp(`^"[\\x21\\x23-\\x7e]{1,${limits.etagLength}}"$`),
                `must be a quoted entity tag of at most ${limits.etagLength} characters`,
              ),
            bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
          }),
        )
        .min(1)
        .max(limits.reportParts),
    })
    .optional(),
});

/**
 * Every output is uploaded: complete at its staging key, or (multipart) incomplete at its
 * destination; the Manager promotes or commits them and writes the manifest.
 */
export const CompletedReportSchema = z.object({
  type: z.literal("completed"),
  ...reportFields,
  outputs: z
    .array(OutputResultSchema)
    .min(1)
    .max(limits.outputs)
    .refine(
      (outputs) =>
        outputs.reduce((sum, output) => sum + (output.multipart?.parts.length ?? 0), 0) <= limits.reportParts,
      `must list at most ${limits.reportParts} multipart parts over all outputs`,
    ),
  logsUri: s3Uri,
});

export const FailedReportSchema = z.object({
  type: z.literal("failed"),
  ...reportFields,
  failureCode: z
    .string()
    .regex(
      new RegExp(`^[A-Z][A-Z0-9_]{0,${limits.failureCodeLength - 1}}$`),
      `must be 1 to ${limits.failureCodeLength} uppercase letters, digits or '_', starting with a letter`,
    ),
  failureMessage: paragraph(limits.failureMessageLength),
  logsUri: s3Uri.optional(),
});

export const CancelledReportSchema = z.object({ type: z.literal("cancelled"), ...reportFields });

export const ReportSchema = z.discriminatedUnion("type", [
  AcceptedReportSchema,
  RejectedReportSchema,
  StartedReportSchema,
  EncodedReportSchema,
  UploadPausedReportSchema,
  UploadResumedReportSchema,
  InputWaitingReportSchema,
  InputResumedReportSchema,
  CompletedReportSchema,
  FailedReportSchema,
  CancelledReportSchema,
]);

// ---- types -----------------------------------------------------------------------------

export type HardwareEncoderProbe = z.infer<typeof HardwareEncoderProbeSchema>;
export type Certification = z.infer<typeof CertificationSchema>;
export type ProbeReport = z.infer<typeof ProbeReportSchema>;
export type WorkerRegistrationRequest = z.infer<typeof WorkerRegistrationRequestSchema>;
export type WorkerRegistrationResponse = z.infer<typeof WorkerRegistrationResponseSchema>;
export type ChallengePurpose = z.infer<typeof ChallengePurposeSchema>;
export type WorkerChallengeRequest = z.infer<typeof WorkerChallengeRequestSchema>;
export type WorkerChallenge = z.infer<typeof WorkerChallengeSchema>;
export type WorkerReRegistrationRequest = z.infer<typeof WorkerReRegistrationRequestSchema>;
export type WorkerCredentialsRequest = z.infer<typeof WorkerCredentialsRequestSchema>;
export type WorkerCredentials = z.infer<typeof WorkerCredentialsSchema>;
export type Heartbeat = z.infer<typeof HeartbeatSchema>;
export type Progress = z.infer<typeof ProgressSchema>;
export type StorageSettings = z.infer<typeof StorageSettingsSchema>;
export type LeaseCommand = z.infer<typeof LeaseCommandSchema>;
/** How a lease's outputs reach their destinations. */
export type OutputCommit = LeaseCommand["commit"];
export type CancelCommand = z.infer<typeof CancelCommandSchema>;
export type ResumeUploadsCommand = z.infer<typeof ResumeUploadsCommandSchema>;
export type DrainCommand = z.infer<typeof DrainCommandSchema>;
export type UndrainCommand = z.infer<typeof UndrainCommandSchema>;
export type Command = z.infer<typeof CommandSchema>;
export type CommandEnvelope = z.infer<typeof CommandEnvelopeSchema>;
export type AcceptedReport = z.infer<typeof AcceptedReportSchema>;
export type RejectedReport = z.infer<typeof RejectedReportSchema>;
export type StartedReport = z.infer<typeof StartedReportSchema>;
export type EncodedReport = z.infer<typeof EncodedReportSchema>;
export type UploadPausedReport = z.infer<typeof UploadPausedReportSchema>;
export type UploadResumedReport = z.infer<typeof UploadResumedReportSchema>;
export type InputWaitingReport = z.infer<typeof InputWaitingReportSchema>;
export type InputResumedReport = z.infer<typeof InputResumedReportSchema>;
export type OutputResult = z.infer<typeof OutputResultSchema>;
export type CompletedReport = z.infer<typeof CompletedReportSchema>;
export type FailedReport = z.infer<typeof FailedReportSchema>;
export type CancelledReport = z.infer<typeof CancelledReportSchema>;
export type Report = z.infer<typeof ReportSchema>;
/** What one kind of report says beyond the fields every report carries. */
export type ReportBody<T extends Report["type"]> = Omit<
  Extract<Report, { type: T }>,
  "type" | "protocolVersion" | "workerId" | "instanceId" | "attemptId" | "fencingToken" | "sentAt"
>;
