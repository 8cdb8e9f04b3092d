import {
  type EnvironmentResult,
  parseEnvironment,
  redactEnvironment,
  secret,
  urlWithSecretPassword,
} from "@tjm/platform/environment";
import { messageLimits } from "@tjm/protocol/limits";
import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65535);
const url = (protocols: string[]) =>
  z.url({
    protocol: new RegExp(`^(${protocols.join("|")})$`),
    error: `must be a ${protocols.join(" or ")} URL`,
  });

/**
 * One URL or several, comma-separated (the servers of a cluster); kept as the list. Each entry
 * is checked on its own, and a bad one is named by its place in the list.
 */
const urlList = (protocols: string[]) => {
  const entry = url(protocols);
  return z.string().transform((value, context) => {
    const entries = value.split(",").map((item) => item.trim());
    entries.forEach((item, index) => {
      if (!entry.safeParse(item).success) {
        context.addIssue({
          code: "custom",
          message: `entry ${index + 1} (${JSON.stringify(item)}) must be a ${protocols.join(" or ")} URL`,
        });
      }
    });
    return entries;
  });
};

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
    /**
     * How often an open event stream (SSE) re-checks that its token still stands, all of this
     * Manager's streams in one query: a stream ends at most this long after its account is
     * disabled, its client's authorization changes or its sign-in session ends (and at its expiry).
     */
    SSE_STANDING_CHECK_MS: z.coerce.number().int().min(100).max(60_000).default(2000),

    // Metrics (Prometheus text at /metrics)
    /** Off: no /metrics and nothing collected (the submit bench's on/off ratio). */
    METRICS_ENABLED: z
      .enum(["true", "false"], { error: "must be true or false" })
      .default("true")
      .transform((value) => value === "true"),
    /** Unset: /metrics is served on the API port. Set: only on METRICS_HOST:METRICS_PORT. */
    METRICS_PORT: port.min(1).optional(),
    /** Where the metrics port listens; loopback unless a scraper elsewhere must reach it. */
    METRICS_HOST: z.string().min(1).default("127.0.0.1"),
    /** When set, a scrape (on either port) must send `Authorization: Bearer <it>`. */
    METRICS_BEARER_TOKEN: secret(z.string().min(32, "must be at least 32 characters").optional()),

    // PostgreSQL
    DATABASE_URL: urlWithSecretPassword(url(["postgres", "postgresql"])),
    /** Schema holding TJM's tables; tests give each file its own. */
    DATABASE_SCHEMA: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lowercase SQL identifier")
      .default("public"),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),

    // NATS
    /** The NATS servers, comma-separated: one server, or several of one cluster (the client fails over). */
    NATS_URL: urlWithSecretPassword(urlList(["nats", "tls"])),
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
    NATS_ACCOUNT_SIGNING_KEY_SEED: secret(
      z
        .string()
        .regex(/^SA[A-Z2-7]{56}$/, "must be an NKey account seed: 'SA' and 56 base32 characters")
        .optional(),
    ),
    /**
     * The NATS servers handed to Workers (comma-separated, as NATS_URL), when they reach NATS by
     * other addresses than the Manager.
     */
    NATS_WORKER_URL: urlWithSecretPassword(urlList(["nats", "tls", "ws", "wss"]).optional()),
    /**
     * Copies of each stream and of the presence bucket the Manager creates: 1 on a single
     * server, 3 (or 5) on a cluster, so that losing a server loses nothing. Consumers follow
     * their stream. An existing stream is brought to this count.
     */
    NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
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
    S3_SECRET_ACCESS_KEY: secret(z.string().min(1)),
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
    /**
     * Parts the store accepts in one multipart upload, handed to Workers so they size their
     * parts to fit: S3 10,000, Swift's s3api 1,000 (max_upload_part_num).
     */
    S3_MAX_PARTS: z.coerce.number().int().min(1).max(10_000).default(10_000),
    /**
     * How outputs reach their destinations (docs/storage.md), named in every lease so Worker
     * and Manager never disagree: copy, a completed upload at a staging key copied server-side
     * (any S3-compatible store, s3rver included); multipart, an upload at the destination left
     * incomplete by the Worker and completed by the Manager, with no copy (needs ListParts,
     * ListMultipartUploads and AbortMultipartUpload: AWS S3, MinIO, Swift s3api).
     */
    S3_COMMIT: z.enum(["copy", "multipart"]).default("copy"),
    /**
     * The bucket of account avatars (with the S3_* settings above): uploads are staged under
     * avatar-staging/, re-encoded avatars stored under avatars/. It must exist; browsers never
     * reach it except through the presigned PUT of an upload.
     */
    AVATAR_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be an S3 bucket name")
      .default("tjm-avatars"),

    // Operator authentication (OIDC)
    OIDC_ISSUER_URL: url(["http", "https"]),
    /** Overrides discovery of the JWKS through the issuer's openid-configuration. */
    OIDC_JWKS_URL: url(["http", "https"]).optional(),
    OIDC_OPERATIONS_ADMIN_AUDIENCE: z.string().min(1),
    /** Audience of tenant tokens (tenant routes under /api/v1/projects); their tjm_projects claim lists project ids. */
    OIDC_TENANT_AUDIENCE: z.string().min(1).default("tjm-api"),

    /**
     * An external OpenID provider trusted for operator sign-in only: its tokens are accepted for
     * the operations audience and refused everywhere else. TJM's own issuer stays OIDC_ISSUER_URL.
     */
    OIDC_OPERATOR_ISSUER_URL: url(["http", "https"]).optional(),
    /** Overrides discovery of the external operator issuer's JWKS. */
    OIDC_OPERATOR_JWKS_URL: url(["http", "https"]).optional(),

    // Built-in OpenID provider (Node entrypoint only)
    /**
     * Serve TJM's own OpenID provider at OIDC_ISSUER_URL's path (e.g. http://host:8080/oidc).
     * Off: OIDC_ISSUER_URL names a provider served elsewhere (a Node Manager's).
     */
    PROVIDER_ENABLED: z
      .enum(["true", "false"], { error: "must be true or false" })
      .default("true")
      .transform((value) => value === "true"),
    /**
     * Key material (32+ characters of randomness) the provider's signing keys are encrypted
     * under in PostgreSQL, and its cookie keys are derived from: every replica has the same.
     */
    PROVIDER_KEY_ENCRYPTION_KEY: secret(z.string().min(32, "must be at least 32 characters").optional()),
    /** Lifetime of access tokens (JWT, every TJM audience); at most 10 minutes. */
    PROVIDER_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(30).max(600).default(600),
    /** Absolute lifetime of a refresh token chain: rotation never extends it. */
    PROVIDER_REFRESH_TOKEN_LIFETIME_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(90 * 86_400)
      .default(43_200),
    /** How long a sign-in is remembered by the browser's provider session. */
    PROVIDER_SESSION_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(90 * 86_400)
      .default(86_400),
    /** A rotated-in signing key is published this long before it signs (JWKS caches catch up). */
    PROVIDER_KEY_PUBLISH_LEAD_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
    /** How often each replica re-reads the signing keys; must not exceed the publish lead. */
    PROVIDER_KEY_REFRESH_SECONDS: z.coerce.number().int().min(1).max(3_600).default(30),
    /** Failed sign-ins of one account within the window before it is refused for a window. */
    SIGN_IN_ACCOUNT_FAILURE_LIMIT: z.coerce.number().int().min(1).max(10_000).default(10),
    /** Failed sign-ins from one client address within the window before it is refused. */
    SIGN_IN_ADDRESS_FAILURE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(100),
    /** The failure-counting window, and how long refusals last once a limit is reached. */
    SIGN_IN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
    /**
     * Key of the HMAC one-time codes (identifier verification, recovery, SMS and e-mail factors)
     * are stored under. Unset: derived from ENROLLMENT_TOKEN_SECRET (HKDF, its own label), which
     * every replica shares; changing either voids the codes pending (10 minutes' worth).
     */
    ONE_TIME_CODE_HMAC_KEY: secret(z.string().min(32, "must be at least 32 characters").optional()),
    /** Recovery codes asked for per identifier within the window before refusals (429). */
    RECOVERY_REQUEST_IDENTIFIER_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(5),
    /** Recovery codes asked for per client address within the window before refusals. */
    RECOVERY_REQUEST_ADDRESS_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(30),
    /** Recovery codes typed per identifier within the window, across its challenges, before refusals. */
    RECOVERY_CODE_IDENTIFIER_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10),
    /** Recovery codes typed per client address within the window, across identifiers, before refusals. */
    RECOVERY_CODE_ADDRESS_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(50),
    /**
     * Recovery messages sent to one e-mail address or phone within the window; past it a request is
     * answered as usual and no code is sent (the destination is not flooded).
     */
    RECOVERY_DESTINATION_MESSAGE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(5),
    /** Password resets tried per client address within the window before refusals. */
    RECOVERY_RESET_ADDRESS_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(30),
    /** The recovery limits' counting window, and how long a refusal lasts. */
    RECOVERY_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
    /** How long a recovery token (step 2's answer) works: at most the 10 minutes of its code. */
    RECOVERY_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(600).default(600),
    /**
     * How recent the token's sign-in (auth_time) must be for the account actions that need it:
     * changing identifiers, password or factors, deleting the account. Older: 403
     * auth.reauthentication_required with this max_age.
     */
    REAUTHENTICATION_MAX_AGE_SECONDS: z.coerce.number().int().min(10).max(86_400).default(300),
    /**
     * Key material (32+ characters) TOTP factor secrets are encrypted under (AES-256-GCM) in
     * PostgreSQL: they must be read back to check a code, so they are not hashed. Unset: derived
     * from ENROLLMENT_TOKEN_SECRET (HKDF, its own label). Changing it makes every TOTP factor unusable.
     */
    MFA_SECRET_ENCRYPTION_KEY: secret(z.string().min(32, "must be at least 32 characters").optional()),
    /** Codes sent (factor enrolment and sign-in, SMS or e-mail) to one phone or address in any hour. */
    MFA_CODE_SENDS_PER_HOUR: z.coerce.number().int().min(1).max(100).default(5),
    /**
     * Whether an account holding the operator role may use an SMS or e-mail factor (lower
     * assurance than TOTP: NIST SP 800-63B restricts SMS). false: such accounts are offered only
     * TOTP and recovery codes at sign-in, and cannot enrol SMS or e-mail factors.
     */
    MFA_OPERATOR_SMS_EMAIL_ALLOWED: z
      .enum(["true", "false"], { error: "must be true or false" })
      .default("true")
      .transform((value) => value === "true"),
    /**
     * Operator routes refuse (403 auth.mfa_required) a token whose sign-in used no second factor
     * (its amr lacks "mfa"). Off by default for the demo; turn it on in production.
     */
    OPERATOR_REQUIRE_MFA: z
      .enum(["true", "false"], { error: "must be true or false" })
      .default("false")
      .transform((value) => value === "true"),
    /**
     * Hosts the provider may call although they resolve to private or loopback addresses
     * (comma-separated host names or IPs): an Admin console's back-channel logout endpoint on the
     * internal network. Every other private address is refused, against server-side request forgery.
     */
    PROVIDER_PRIVATE_NETWORK_HOSTS: z
      .string()
      .default("")
      .transform((value) =>
        value
          .split(",")
          .map((item) => item.trim().toLowerCase())
          .filter((item) => item.length > 0),
      ),
    /**
     * Attempts to deliver a back-channel logout TJM owes a client after ending a session itself
     * (docs/sessions.md) before the row is marked failed; the waits between them double.
     */
    BACKCHANNEL_LOGOUT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
    /** The wait after a back-channel logout's first failed attempt; each later wait doubles (at most 10 minutes). */
    BACKCHANNEL_LOGOUT_RETRY_BASE_MS: z.coerce.number().int().min(10).max(600_000).default(2000),
    /**
     * Addresses of reverse proxies whose X-Forwarded-For is believed (comma-separated IPs); the
     * client address is otherwise the socket's.
     */
    TRUSTED_PROXY_ADDRESSES: z
      .string()
      .default("")
      .transform((value) =>
        value
          .split(",")
          .map((item) => item.trim())
          .filter((item) => item.length > 0),
      )
      .pipe(z.array(z.union([z.ipv4(), z.ipv6()], { error: "must list IP addresses" }))),

    // Worker enrollment
    /** HMAC key for stored enrollment tokens; 32+ characters of randomness (e.g. `openssl rand -hex 32`). */
    ENROLLMENT_TOKEN_SECRET: secret(z.string().min(32, "must be at least 32 characters")),

    // Identity
    /**
     * HMAC key under which OAuth client secrets are stored; 32+ characters of randomness. Needed
     * once a confidential client exists; changing it invalidates every client secret.
     */
    CLIENT_SECRET_HMAC_KEY: secret(z.string().min(32, "must be at least 32 characters").optional()),

    // Messages people receive (e-mail, SMS), sent from the message outbox (docs/delivery.md)
    /**
     * How e-mail leaves: smtp (the SMTP_* settings), log (a log line says a message was written
     * and not sent; for a machine without mail) or none (enqueueing an e-mail is refused).
     */
    EMAIL_TRANSPORT: z.enum(["none", "smtp", "log"]).default("none"),
    SMTP_HOST: z.string().min(1).optional(),
    SMTP_PORT: port.min(1).default(587),
    /** none: plain text (a relay on loopback only); starttls: upgrade, refused without it; tls: TLS from the start (port 465). */
    SMTP_TLS: z.enum(["none", "starttls", "tls"]).default("starttls"),
    SMTP_USERNAME: z.string().min(1).optional(),
    SMTP_PASSWORD: secret(z.string().min(1).optional()),
    /** The From address; its domain is the right side of every Message-ID. */
    EMAIL_FROM: z.email({ error: "must be an e-mail address" }).optional(),
    /** The name messages are sent from and signed with. */
    MESSAGE_SERVICE_NAME: z.string().min(1).max(64).default("TJM"),
    /** How SMS leave: webhook (the SMS_WEBHOOK_* settings), log, or none. */
    SMS_TRANSPORT: z.enum(["none", "webhook", "log"]).default("none"),
    /** Where SMS are POSTed, signed; https, or http to a loopback address only. */
    SMS_WEBHOOK_URL: urlWithSecretPassword(url(["http", "https"]).optional()),
    /** The HMAC-SHA-256 key of the webhook's signature, shared with the receiver; 32+ characters. */
    SMS_WEBHOOK_SECRET: secret(z.string().min(32, "must be at least 32 characters").optional()),
    /** A send (an SMTP conversation, a webhook request) taking longer fails and is retried. */
    MESSAGE_SEND_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
    /** Attempts before a message is marked failed. */
    MESSAGE_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
    /** The wait after a first failed attempt; it doubles with each further one, up to the max. */
    MESSAGE_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(2000),
    MESSAGE_RETRY_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(600_000),
    /** How often the sender looks for messages nobody woke it for (other replicas', retries due). */
    MESSAGE_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  })
  .superRefine((config, context) => {
    const workerUrls = config.NATS_WORKER_URL ?? config.NATS_URL;
    if (workerUrls.join(",").length > messageLimits.urlLength) {
      context.addIssue({
        code: "custom",
        path: [config.NATS_WORKER_URL ? "NATS_WORKER_URL" : "NATS_URL"],
        message: `the list handed to Workers must fit in ${messageLimits.urlLength} characters, commas included`,
      });
    }
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
    if (config.PROVIDER_ENABLED) {
      for (const name of ["PROVIDER_KEY_ENCRYPTION_KEY", "CLIENT_SECRET_HMAC_KEY"] as const) {
        if (config[name] === undefined) {
          context.addIssue({
            code: "custom",
            path: [name],
            message:
              "required when PROVIDER_ENABLED=true (32+ characters, e.g. `openssl rand -hex 32`; or set PROVIDER_ENABLED=false and point OIDC_ISSUER_URL at another provider)",
          });
        }
      }
      const path = new URL(config.OIDC_ISSUER_URL).pathname.replace(/\/+$/, "");
      if (path === "" || path === "/api" || path.startsWith("/api/")) {
        context.addIssue({
          code: "custom",
          path: ["OIDC_ISSUER_URL"],
          message:
            "with PROVIDER_ENABLED=true it is where this Manager serves its provider: give it a path of its own outside /api, e.g. http://localhost:8080/oidc",
        });
      }
    }
    if (config.PROVIDER_KEY_REFRESH_SECONDS > config.PROVIDER_KEY_PUBLISH_LEAD_SECONDS) {
      context.addIssue({
        code: "custom",
        path: ["PROVIDER_KEY_REFRESH_SECONDS"],
        message: `must not exceed PROVIDER_KEY_PUBLISH_LEAD_SECONDS (${config.PROVIDER_KEY_PUBLISH_LEAD_SECONDS}): every replica must publish a new key before it signs`,
      });
    }
    if (config.METRICS_PORT !== undefined && config.METRICS_PORT === config.PORT) {
      context.addIssue({
        code: "custom",
        path: ["METRICS_PORT"],
        message: "must differ from PORT (leave it unset to serve /metrics on the API port)",
      });
    }
    if (config.EMAIL_TRANSPORT === "smtp") {
      for (const name of ["SMTP_HOST", "EMAIL_FROM"] as const) {
        if (config[name] === undefined) {
          context.addIssue({ code: "custom", path: [name], message: "required when EMAIL_TRANSPORT=smtp" });
        }
      }
      if ((config.SMTP_USERNAME === undefined) !== (config.SMTP_PASSWORD === undefined)) {
        context.addIssue({
          code: "custom",
          path: ["SMTP_PASSWORD"],
          message:
            "SMTP_USERNAME and SMTP_PASSWORD go together (both, or neither for a relay without authentication)",
        });
      }
    }
    if (config.SMS_TRANSPORT === "webhook") {
      for (const name of ["SMS_WEBHOOK_URL", "SMS_WEBHOOK_SECRET"] as const) {
        if (config[name] === undefined) {
          context.addIssue({ code: "custom", path: [name], message: "required when SMS_TRANSPORT=webhook" });
        }
      }
      if (config.SMS_WEBHOOK_URL !== undefined) {
        const webhook = new URL(config.SMS_WEBHOOK_URL);
        const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(webhook.hostname);
        if (webhook.protocol === "http:" && !loopback) {
          context.addIssue({
            code: "custom",
            path: ["SMS_WEBHOOK_URL"],
            message: "must be https (http only to a loopback address): the requests carry codes",
          });
        }
      }
    }
    if (config.MESSAGE_RETRY_MAX_MS < config.MESSAGE_RETRY_BASE_MS) {
      context.addIssue({
        code: "custom",
        path: ["MESSAGE_RETRY_MAX_MS"],
        message: `must be at least MESSAGE_RETRY_BASE_MS (${config.MESSAGE_RETRY_BASE_MS})`,
      });
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

export type ParseResult = EnvironmentResult<Config>;

/** Parses the environment once; on failure lists every missing or invalid variable. */
export function parseEnv(source: Record<string, string | undefined>): ParseResult {
  return parseEnvironment(configSchema, source);
}

/**
 * Config as it may be logged: every variable the schema marks with `secret` or
 * `urlWithSecretPassword` is masked.
 */
export function redactConfig(config: Config): Record<string, unknown> {
  return redactEnvironment(configSchema, config);
}
