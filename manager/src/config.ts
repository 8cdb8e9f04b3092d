import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65535);
const url = (protocols: string[]) =>
  z.url({
    protocol: new RegExp(`^(${protocols.join("|")})$`),
    error: `must be a ${protocols.join(" or ")} URL`,
  });

export const configSchema = z
  .object({
    // HTTP server
    HOST: z.string().min(1).default("0.0.0.0"),
    PORT: port.default(8080),
    LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
    /** Bodies above this are refused with 413 before they are parsed. */
    MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),

    // PostgreSQL
    DATABASE_URL: url(["postgres", "postgresql"]),
    /** Schema holding TJM's tables; tests give each file its own. */
    DATABASE_SCHEMA: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lowercase SQL identifier")
      .default("public"),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),

    // NATS
    NATS_URL: url(["nats", "tls"]),
    /** Subject prefix of every TJM subject; configurable only so tests can isolate themselves. */
    NATS_SUBJECT_PREFIX: z
      .string()
      .regex(
        /^[a-z][a-z0-9_-]{0,31}$/,
        "must be 1 to 32 lowercase letters, digits, '_' or '-', starting with a letter",
      )
      .default("tjm"),

    /**
     * How NATS authenticates: "jwt" (decentralized auth; each Worker gets a user JWT limited to
     * its own subjects) or "none" (an open NATS for a laptop demo; logged as a warning).
     */
    NATS_AUTH: z.enum(["jwt", "none"]).default("jwt"),
    /** The Manager's own credentials (a .creds file) when NATS_AUTH=jwt. */
    NATS_CREDS_FILE: z.string().min(1).optional(),
    /** Public key ("A…") of the NATS account Workers belong to. */
    NATS_ACCOUNT_PUBLIC_KEY: z
      .string()
      .regex(/^A[A-Z2-7]{55}$/, "must be an NKey account public key: 'A' and 55 base32 characters")
      .optional(),
    /** Seed ("SA…") of a signing key listed in that account's JWT; signs Worker user JWTs. */
    NATS_ACCOUNT_SIGNING_KEY_SEED: z
      .string()
      .regex(/^SA[A-Z2-7]{56}$/, "must be an NKey account seed: 'SA' and 56 base32 characters")
      .optional(),
    /** The NATS URL handed to Workers, when they reach NATS by another address than the Manager. */
    NATS_WORKER_URL: url(["nats", "tls", "ws", "wss"]).optional(),
    /** Lifetime of a Worker's user JWT; the agent refreshes it at half-life. */
    WORKER_JWT_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(10)
      .max(30 * 24 * 3600)
      .default(3600),

    // Workers
    /** How often Workers heartbeat; two missed intervals make a Worker SUSPECTED. */
    HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5000),
    /** Silence after which a Worker is OFFLINE (and, with the execution issue, its attempts lost). */
    WORKER_LOST_AFTER_MS: z.coerce.number().int().min(300).max(86_400_000).default(30_000),

    // Execution
    /** A Worker must accept a lease within this, or the attempt fails with DISPATCH_TIMEOUT. */
    DISPATCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
    /** Attempts per job before DISPATCH_TIMEOUT / WORKER_LOST failures fail the job. */
    MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(3),
    /** A job not finished this long after submission fails with DEADLINE_EXCEEDED. */
    JOB_DEADLINE_HOURS: z.coerce
      .number()
      .min(0.001)
      .max(24 * 365)
      .default(72),

    // Object storage (handed to Workers in each lease; the Manager promotes outputs with it)
    S3_ENDPOINT: url(["http", "https"]),
    S3_REGION: z.string().min(1).default("us-east-1"),
    S3_ACCESS_KEY_ID: z.string().min(1),
    S3_SECRET_ACCESS_KEY: z.string().min(1),
    /** Path-style URLs (http://host/bucket/key): MinIO, Swift s3api and s3rver need them. */
    S3_FORCE_PATH_STYLE: z
      .enum(["true", "false"], { error: "must be true or false" })
      .default("true")
      .transform((value) => value === "true"),
    /**
     * WHEN_REQUIRED sends plain bodies every S3-compatible server stores as sent; the SDK's
     * WHEN_SUPPORTED adds CRC checksums in aws-chunked framing (AWS S3 only).
     */
    S3_CHECKSUMS: z.enum(["WHEN_REQUIRED", "WHEN_SUPPORTED"]).default("WHEN_REQUIRED"),

    // Operator authentication (OIDC)
    OIDC_ISSUER_URL: url(["http", "https"]),
    /** Overrides discovery of the JWKS through the issuer's openid-configuration. */
    OIDC_JWKS_URL: url(["http", "https"]).optional(),
    OIDC_OPERATIONS_ADMIN_AUDIENCE: z.string().min(1),
    /** Audience of tenant tokens (tenant routes under /api/v1/projects); their tjm_projects claim lists project ids. */
    OIDC_TENANT_AUDIENCE: z.string().min(1).default("tjm-api"),

    // Worker enrollment
    /** HMAC key for stored enrollment tokens; 32+ characters of randomness (e.g. `openssl rand -hex 32`). */
    ENROLLMENT_TOKEN_SECRET: z.string().min(32, "must be at least 32 characters"),

    // Identity
    /**
     * HMAC key under which OAuth client secrets are stored; 32+ characters of randomness. Needed
     * once a confidential client exists; changing it invalidates every client secret.
     */
    CLIENT_SECRET_HMAC_KEY: z.string().min(32, "must be at least 32 characters").optional(),
  })
  .superRefine((config, context) => {
    if (config.NATS_AUTH === "jwt") {
      for (const name of [
        "NATS_CREDS_FILE",
        "NATS_ACCOUNT_PUBLIC_KEY",
        "NATS_ACCOUNT_SIGNING_KEY_SEED",
      ] as const) {
        if (config[name] === undefined) {
          context.addIssue({
            code: "custom",
            path: [name],
            message: "required when NATS_AUTH=jwt (set NATS_AUTH=none only for an unauthenticated demo NATS)",
          });
        }
      }
    }
    if (config.WORKER_LOST_AFTER_MS <= 2 * config.HEARTBEAT_INTERVAL_MS) {
      context.addIssue({
        code: "custom",
        path: ["WORKER_LOST_AFTER_MS"],
        message: `must exceed two heartbeat intervals (${2 * config.HEARTBEAT_INTERVAL_MS} ms), when a Worker becomes SUSPECTED`,
      });
    }
  });

export type Config = z.infer<typeof configSchema>;

export type ParseResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Parses the environment once; on failure lists every missing or invalid variable. */
export function parseEnv(source: Record<string, string | undefined>): ParseResult {
  const present = Object.fromEntries(
    Object.entries(source).filter(([, value]) => value !== undefined && value !== ""),
  );
  const result = configSchema.safeParse(present);
  if (result.success) return { ok: true, config: result.data };
  const problems = result.error.issues.map((issue) => {
    const name = String(issue.path[0]);
    if (issue.code === "custom") return `${name}: ${issue.message}`;
    return name in present ? `${name}: ${issue.message}` : `${name}: required but not set`;
  });
  return { ok: false, problems };
}

/** Config as it may be logged: credentials in URLs are masked. */
export function redactConfig(config: Config): Record<string, unknown> {
  const mask = (value: string) => {
    try {
      const parsed = new URL(value);
      if (parsed.password) parsed.password = "***";
      return parsed.toString();
    } catch {
      return "***";
    }
  };
  return {
    ...config,
    DATABASE_URL: mask(config.DATABASE_URL),
    NATS_URL: mask(config.NATS_URL),
    ENROLLMENT_TOKEN_SECRET: "***",
    CLIENT_SECRET_HMAC_KEY: config.CLIENT_SECRET_HMAC_KEY && "***",
    NATS_ACCOUNT_SIGNING_KEY_SEED: config.NATS_ACCOUNT_SIGNING_KEY_SEED && "***",
    S3_SECRET_ACCESS_KEY: "***",
  };
}
