import { describe, expect, it } from "vitest";
import { parseEnv, redactConfig } from "./config.ts";

const valid = {
  DATABASE_URL: "postgres://tjm:secret@db:5432/tjm",
  NATS_URL: "nats://nats:4222",
  OIDC_ISSUER_URL: "https://id.example.com/realms/media",
  OIDC_OPERATIONS_ADMIN_AUDIENCE: "tjm-operations",
  ENROLLMENT_TOKEN_SECRET: "0123456789abcdef0123456789abcdef",
  NATS_CREDS_FILE: "/etc/tjm/manager.creds",
  NATS_ACCOUNT_PUBLIC_KEY: `A${"B".repeat(55)}`,
  NATS_ACCOUNT_SIGNING_KEY_SEED: `SA${"C".repeat(56)}`,
  S3_ENDPOINT: "http://minio:9000",
  S3_ACCESS_KEY_ID: "tjm",
  S3_SECRET_ACCESS_KEY: "s3-secret-value",
};

describe("parseEnv", () => {
  it("fills documented defaults", () => {
    const result = parseEnv(valid);
    expect(result).toMatchObject({
      ok: true,
      config: {
        PORT: 8080,
        HOST: "0.0.0.0",
        DATABASE_SCHEMA: "public",
        NATS_SUBJECT_PREFIX: "tjm",
        MAX_BODY_BYTES: 1048576,
        NATS_AUTH: "jwt",
        WORKER_JWT_TTL_SECONDS: 3600,
        HEARTBEAT_INTERVAL_MS: 5000,
        WORKER_LOST_AFTER_MS: 30000,
        DISPATCH_TIMEOUT_MS: 15000,
        MAX_ATTEMPTS: 3,
        JOB_DEADLINE_HOURS: 72,
        S3_REGION: "us-east-1",
        S3_FORCE_PATH_STYLE: true,
        S3_CHECKSUMS: "WHEN_REQUIRED",
      },
    });
  });

  it("lists every missing variable, treating empty values as missing", () => {
    const result = parseEnv({ NATS_URL: "" });
    expect(result).toEqual({
      ok: false,
      problems: [
        "DATABASE_URL: required but not set",
        "NATS_URL: required but not set",
        "S3_ENDPOINT: required but not set",
        "S3_ACCESS_KEY_ID: required but not set",
        "S3_SECRET_ACCESS_KEY: required but not set",
        "OIDC_ISSUER_URL: required but not set",
        "OIDC_OPERATIONS_ADMIN_AUDIENCE: required but not set",
        "ENROLLMENT_TOKEN_SECRET: required but not set",
      ],
    });
  });

  it("names each invalid variable", () => {
    const result = parseEnv({
      ...valid,
      DATABASE_URL: "mysql://db/tjm",
      PORT: "http",
      DATABASE_SCHEMA: "Drop Table",
    });
    expect(result.ok).toBe(false);
    const names = result.ok ? [] : result.problems.map((problem) => problem.split(":")[0]);
    expect(names.sort()).toEqual(["DATABASE_SCHEMA", "DATABASE_URL", "PORT"]);
  });

  it("needs the Manager's NATS credentials and the account signing key unless NATS_AUTH=none", () => {
    const { NATS_CREDS_FILE, NATS_ACCOUNT_PUBLIC_KEY, NATS_ACCOUNT_SIGNING_KEY_SEED, ...open } = valid;
    const result = parseEnv(open);
    expect(result.ok).toBe(false);
    const names = result.ok ? [] : result.problems.map((problem) => problem.split(":")[0]);
    expect(names).toEqual(["NATS_CREDS_FILE", "NATS_ACCOUNT_PUBLIC_KEY", "NATS_ACCOUNT_SIGNING_KEY_SEED"]);
    expect(result.ok ? "" : result.problems[0]).toContain("NATS_AUTH=none");
    expect(parseEnv({ ...open, NATS_AUTH: "none" }).ok).toBe(true);
  });

  it("refuses a Worker-lost delay that does not exceed two heartbeat intervals", () => {
    const result = parseEnv({ ...valid, HEARTBEAT_INTERVAL_MS: "5000", WORKER_LOST_AFTER_MS: "10000" });
    expect(result).toEqual({
      ok: false,
      problems: [
        "WORKER_LOST_AFTER_MS: must exceed two heartbeat intervals (10000 ms), when a Worker becomes SUSPECTED",
      ],
    });
  });

  it("masks passwords before the config is logged", () => {
    const result = parseEnv({ ...valid, NATS_URL: "nats://worker:pw@nats:4222" });
    if (!result.ok) throw new Error("expected a valid config");
    const logged = JSON.stringify(redactConfig(result.config));
    expect(logged).not.toContain("secret");
    expect(logged).not.toContain(":pw@");
    expect(logged).not.toContain("0123456789abcdef");
    expect(logged).not.toContain("CCCCCCCC");
    expect(logged).not.toContain("s3-secret-value");
  });
});
