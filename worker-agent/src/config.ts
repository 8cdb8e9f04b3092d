import { isAbsolute, resolve } from "node:path";
import { LOG_LEVELS } from "@tjm/platform";
import { redactEnvironment, secret } from "@tjm/platform/environment";
import { messageLimits, WORKER_POOLS } from "@tjm/protocol";
import { z } from "zod";
import { MAX_PARTS_IN_FLIGHT } from "./storage/part-size.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

const directory = z
  .string()
  .min(1)
  .transform((path) => (isAbsolute(path) ? path : resolve(path)));

export const configSchema = z.object({
  // Manager
  MANAGER_URL: z.url({ protocol: /^https?$/, hostname: /./, error: "must be an http or https URL" }),
  /**
   * Single-use token an operator issued; needed only until the Worker has an identity in
   * WORKER_STATE_DIR. Same bounds as the registration request, so a typo fails here.
   */
  ENROLLMENT_TOKEN: secret(
    z
      .string()
      .min(messageLimits.enrollmentTokenLengthMin)
      .max(messageLimits.enrollmentTokenLengthMax)
      .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")
      .optional(),
  ),
  /** Keep retrying an unreachable or unavailable (503) Manager, and NATS, this long at start. */
  WORKER_STARTUP_TIMEOUT_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),

  // Local state
  /** The Worker's identity and NKey seed (0700 directory, 0600 files); keep it across restarts. */
  WORKER_STATE_DIR: directory,
  /** Scratch space for inputs and outputs of running attempts; created at start. */
  WORKER_WORK_DIR: directory,

  // What this Worker is
  WORKER_POOL: z.enum(WORKER_POOLS).default("cpu"),
  /** Shown to operators; the host name unless set. */
  WORKER_NAME: z
    .string()
    .min(1)
    .max(messageLimits.workerNameLength)
    .refine((name) => !CONTROL_CHARACTER.test(name), "must be one line without control characters")
    .optional(),
  /** Lowers the number of attempts run at once below what the probe finds the host can take. */
  WORKER_CAPACITY: z.coerce.number().int().min(1).max(messageLimits.capacityMax).optional(),
  /** ffmpeg and ffprobe binaries; looked up on PATH unless set. */
  FFMPEG_PATH: z.string().min(1).optional(),
  FFPROBE_PATH: z.string().min(1).optional(),

  // Uploads
  /**
   * How long a storage request keeps retrying an unreachable store: then an upload pauses
   * (WAITING_FOR_STORAGE), and a read of the input waits (WORKER_INPUT_WAIT_MAX_MS).
   */
  WORKER_UPLOAD_RETRY_BUDGET_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  /** Tries per storage request within that budget. */
  WORKER_UPLOAD_RETRY_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
  /**
   * Multipart part size (S3 allows 5 MiB to 5 GiB) for every output. Unset: each output's is
   * fixed from its plan (storage/part-size.ts), so its parts can go up while it is encoded.
   */
  WORKER_UPLOAD_PART_SIZE_MIB: z.coerce
    .number()
    .int()
    .min(5)
    .max(5 * 1024)
    .optional(),
  /** Parts of one output uploaded at once, at most; each part in flight is held in memory. */
  WORKER_UPLOAD_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(MAX_PARTS_IN_FLIGHT),
  /**
   * "on": ffmpeg streams the input through the agent's relay (ranged reads), and a download
   * is only the fallback; "off": every input is downloaded before ffmpeg starts (a store that
   * charges per request, or a test that needs the input local before it cuts storage).
   */
  WORKER_INPUT_STREAMING: z.enum(["on", "off"]).default("on"),
  /**
   * How long an attempt waits for storage that stopped answering while it reads its input (the
   * stream, a download, a subtitle or watermark): the job stays RUNNING, ffmpeg is held on its
   * read and goes on once the store answers. Longer outages fail it STORAGE_UNAVAILABLE. The
   * job's deadline ends the wait too (the Manager cancels the attempt). Default 24 hours.
   */
  WORKER_INPUT_WAIT_MAX_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3_600_000)
    .default(24 * 3_600_000),

  // Metrics
  /** Prometheus text at http://WORKER_METRICS_HOST:WORKER_METRICS_PORT/metrics; 0 serves none. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
  /** Loopback unless set: the port has no authentication, so exposing it is a deliberate choice. */
  WORKER_METRICS_HOST: z
    .string()
    .regex(/^[\w.:-]+$/, "must be a host name or an IP address")
    .default("127.0.0.1"),

  // Logs
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
});

export type Config = Omit<z.infer<typeof configSchema>, "WORKER_NAME"> & { WORKER_NAME: string };

export type ParseResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Parses the environment once; on failure lists every missing or invalid variable. */
export function parseEnv(source: Record<string, string | undefined>, hostname: string): ParseResult {
  const present = Object.fromEntries(
    Object.entries(source).filter(([, value]) => value !== undefined && value !== ""),
  );
  const result = configSchema.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      return name in present ? `${name}: ${issue.message}` : `${name}: required but not set`;
    });
    return { ok: false, problems };
  }
  const name = result.data.WORKER_NAME ?? defaultName(hostname);
  return { ok: true, config: { ...result.data, WORKER_NAME: name } };
}

function defaultName(hostname: string): string {
  const cleaned = [...hostname].filter((char) => !CONTROL_CHARACTER.test(char)).join("");
  return cleaned.slice(0, messageLimits.workerNameLength) || "worker";
}

/**
 * Config as it may be logged: every variable the schema marks with `secret` is masked (the
 * enrollment token is a secret until it is used).
 */
export function redactConfig(config: Config): Record<string, unknown> {
  return redactEnvironment(configSchema, config);
}
