import {
  type EnvironmentResult,
  parseEnvironment,
  redactEnvironment,
  secret,
  urlWithSecretPassword,
} from "@tjm/platform/environment";
import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65535);
const url = (protocols: string[]) =>
  z.url({
    protocol: new RegExp(`^(${protocols.join("|")})$`),
    error: `must be a ${protocols.join(" or ")} URL`,
  });

export const configSchema = z.object({
  // HTTP server
  /** Where browsers reach the console (origin, no path): the OIDC redirect URIs and the CSRF origin derive from it. */
  ADMIN_PUBLIC_URL: url(["http", "https"]).transform((value) => new URL(value).origin),
  HOST: z.string().min(1).default("0.0.0.0"),
  PORT: port.default(8090),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  /**
   * Bodies the API proxy takes (job submissions), refused with 413 past this while they stream;
   * set it as the Manager's MAX_BODY_BYTES. The console's other routes take 16 KiB.
   */
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),

  // PostgreSQL (the console's own admin_* tables, beside the Manager's or in a schema of their own)
  DATABASE_URL: urlWithSecretPassword(url(["postgres", "postgresql"])),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lowercase SQL identifier")
    .default("public"),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),

  // The Manager, reached server-side only
  MANAGER_URL: url(["http", "https"]).transform((value) => value.replace(/\/+$/, "")),

  // OpenID Connect (the console is a confidential client, client_secret_basic)
  OIDC_ISSUER_URL: url(["http", "https"]),
  ADMIN_CLIENT_ID: z.string().min(1),
  ADMIN_CLIENT_SECRET: secret(z.string().min(1)),
  /** The operations audience, as the Manager names it; the access token's `aud` must be it. */
  OIDC_OPERATIONS_ADMIN_AUDIENCE: z.string().min(1).default("tjm-operations"),

  // Sessions
  /** Secret the key sealing tokens at rest is derived from (HKDF); 32+ characters of randomness. */
  ADMIN_SESSION_KEY: secret(z.string().min(32, "must be at least 32 characters")),
  /** A session unused this long ends; an open event stream alone does not keep it alive. */
  ADMIN_SESSION_IDLE_MINUTES: z.coerce
    .number()
    .min(1)
    .max(7 * 24 * 60)
    .default(30),
  /** A session ends this long after sign-in, however busy. */
  ADMIN_SESSION_ABSOLUTE_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(30 * 24)
    .default(12),
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
