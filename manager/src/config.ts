import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65535);
const url = (protocols: string[]) =>
  z.url({
    protocol: new RegExp(`^(${protocols.join("|")})$`),
    error: `must be a ${protocols.join(" or ")} URL`,
  });

export const configSchema = z.object({
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

  // Operator authentication (OIDC)
  OIDC_ISSUER_URL: url(["http", "https"]),
  /** Overrides discovery of the JWKS through the issuer's openid-configuration. */
  OIDC_JWKS_URL: url(["http", "https"]).optional(),
  OIDC_OPERATIONS_ADMIN_AUDIENCE: z.string().min(1),

  // Worker enrollment
  /** HMAC key for stored enrollment tokens; 32+ characters of randomness (e.g. `openssl rand -hex 32`). */
  ENROLLMENT_TOKEN_SECRET: z.string().min(32, "must be at least 32 characters"),
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
  };
}
