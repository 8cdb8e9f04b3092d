import { parseEnvironment, redactEnvironment, secret } from "@tjm/platform/environment";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { configSchema, parseEnv, redactConfig } from "./config.ts";

const valid = {
  DATABASE_URL: "postgres://tjm:secret@db:5432/tjm",
  NATS_URL: "nats://nats:4222",
  OIDC_ISSUER_URL: "https://tjm.example.com/oidc",
  PROVIDER_KEY_ENCRYPTION_KEY: "provider-key-material-0123456789abcdef",
  CLIENT_SECRET_HMAC_KEY: "client-secret-hmac-key-0123456789abcdef",
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
        S3_MAX_PARTS: 10000,
        S3_COMMIT: "copy",
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
      S3_COMMIT: "rename",
    });
    expect(result.ok).toBe(false);
    const names = result.ok ? [] : result.problems.map((problem) => problem.split(":")[0]);
    expect(names.sort()).toEqual(["DATABASE_SCHEMA", "DATABASE_URL", "PORT", "S3_COMMIT"]);
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

  it("needs the provider's keys while it is enabled, and an issuer path of its own outside /api", () => {
    const { PROVIDER_KEY_ENCRYPTION_KEY, CLIENT_SECRET_HMAC_KEY, ...keyless } = valid;
    const result = parseEnv({ ...keyless, OIDC_ISSUER_URL: "https://tjm.example.com/api/oidc" });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems.map((problem) => problem.split(":")[0])).toEqual([
      "PROVIDER_KEY_ENCRYPTION_KEY",
      "CLIENT_SECRET_HMAC_KEY",
      "OIDC_ISSUER_URL",
    ]);
    expect(problems[0]).toContain("PROVIDER_ENABLED=false");
    expect(problems[2]).toContain("outside /api");
    expect(parseEnv({ ...valid, OIDC_ISSUER_URL: "https://tjm.example.com/" }).ok).toBe(false);
  });

  it("takes any issuer once the provider is off, and an external operator issuer beside it", () => {
    const { PROVIDER_KEY_ENCRYPTION_KEY, CLIENT_SECRET_HMAC_KEY, ...keyless } = valid;
    const result = parseEnv({
      ...keyless,
      PROVIDER_ENABLED: "false",
      OIDC_ISSUER_URL: "https://manager-node.internal:8080/oidc",
      OIDC_OPERATOR_ISSUER_URL: "https://id.example.com/realms/media",
    });
    expect(result).toMatchObject({
      ok: true,
      config: { PROVIDER_ENABLED: false, OIDC_OPERATOR_ISSUER_URL: "https://id.example.com/realms/media" },
    });
  });

  it("refuses a key refresh slower than the publish lead, and lists trusted proxies as addresses", () => {
    const slow = parseEnv({
      ...valid,
      PROVIDER_KEY_PUBLISH_LEAD_SECONDS: "10",
      PROVIDER_KEY_REFRESH_SECONDS: "30",
    });
    expect(slow.ok ? [] : slow.problems).toEqual([
      "PROVIDER_KEY_REFRESH_SECONDS: must not exceed PROVIDER_KEY_PUBLISH_LEAD_SECONDS (10): every replica must publish a new key before it signs",
    ]);
    const proxies = parseEnv({ ...valid, TRUSTED_PROXY_ADDRESSES: " 10.0.0.2, fd00::1 ," });
    expect(proxies).toMatchObject({ ok: true, config: { TRUSTED_PROXY_ADDRESSES: ["10.0.0.2", "fd00::1"] } });
    const bad = parseEnv({ ...valid, TRUSTED_PROXY_ADDRESSES: "proxy.internal" });
    expect(bad.ok ? [] : bad.problems.map((problem) => problem.split(":")[0])).toEqual([
      "TRUSTED_PROXY_ADDRESSES",
    ]);
  });

  it("serves metrics on the API port by default, and takes a port, host and token of their own", () => {
    const defaults = parseEnv(valid);
    expect(defaults).toMatchObject({
      ok: true,
      config: { METRICS_ENABLED: true, METRICS_HOST: "127.0.0.1" },
    });
    expect(defaults.ok && defaults.config.METRICS_PORT).toBeUndefined();
    const own = parseEnv({
      ...valid,
      METRICS_ENABLED: "false",
      METRICS_PORT: "9100",
      METRICS_HOST: "0.0.0.0",
      METRICS_BEARER_TOKEN: "metrics-token-0123456789abcdef0123",
    });
    expect(own).toMatchObject({
      ok: true,
      config: {
        METRICS_ENABLED: false,
        METRICS_PORT: 9100,
        METRICS_HOST: "0.0.0.0",
        METRICS_BEARER_TOKEN: "metrics-token-0123456789abcdef0123",
      },
    });
    if (!own.ok) throw new Error("expected a valid config");
    expect(JSON.stringify(redactConfig(own.config))).not.toContain("metrics-token");
  });

  it.each([
    [
      { METRICS_PORT: "8080" },
      "METRICS_PORT: must differ from PORT (leave it unset to serve /metrics on the API port)",
    ],
    [{ METRICS_PORT: "0" }, "METRICS_PORT"],
    [{ METRICS_BEARER_TOKEN: "short" }, "METRICS_BEARER_TOKEN: must be at least 32 characters"],
    [{ METRICS_ENABLED: "yes" }, "METRICS_ENABLED: must be true or false"],
  ])("refuses the metrics setting %o", (setting, problem) => {
    const result = parseEnv({ ...valid, ...setting });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems).toEqual([expect.stringContaining(problem)]);
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
    expect(logged).not.toContain("provider-key-material");
    expect(logged).not.toContain("client-secret-hmac-key");
  });

  it("sends no message until a transport is configured, and checks each transport's settings", () => {
    const none = parseEnv(valid);
    expect(none).toMatchObject({ ok: true, config: { EMAIL_TRANSPORT: "none", SMS_TRANSPORT: "none" } });
    const smtp = {
      EMAIL_TRANSPORT: "smtp",
      SMTP_HOST: "mail.example.com",
      EMAIL_FROM: "no-reply@example.com",
    };
    expect(parseEnv({ ...valid, ...smtp })).toMatchObject({
      ok: true,
      config: { SMTP_PORT: 587, SMTP_TLS: "starttls", MESSAGE_MAX_ATTEMPTS: 8, MESSAGE_SERVICE_NAME: "TJM" },
    });
    const problems = (env: Record<string, string>) => {
      const result = parseEnv({ ...valid, ...env });
      return result.ok ? [] : result.problems;
    };
    expect(problems({ EMAIL_TRANSPORT: "smtp" })).toEqual([
      expect.stringContaining("SMTP_HOST"),
      expect.stringContaining("EMAIL_FROM"),
    ]);
    expect(problems({ ...smtp, SMTP_USERNAME: "tjm" })).toEqual([expect.stringContaining("go together")]);
    expect(problems({ ...smtp, SMTP_TLS: "ssl" })).toEqual([expect.stringContaining("SMTP_TLS")]);
    expect(problems({ SMS_TRANSPORT: "webhook" })).toEqual([
      expect.stringContaining("SMS_WEBHOOK_URL"),
      expect.stringContaining("SMS_WEBHOOK_SECRET"),
    ]);
    const secret = "sms-webhook-secret-0123456789abcdefgh";
    expect(
      problems({
        SMS_TRANSPORT: "webhook",
        SMS_WEBHOOK_URL: "http://sms.example.com/hook",
        SMS_WEBHOOK_SECRET: secret,
      }),
    ).toEqual([expect.stringContaining("must be https (http only to a loopback address)")]);
    expect(
      problems({
        SMS_TRANSPORT: "webhook",
        SMS_WEBHOOK_URL: "http://127.0.0.1:9000/hook",
        SMS_WEBHOOK_SECRET: secret,
      }),
    ).toEqual([]);
    expect(problems({ MESSAGE_RETRY_BASE_MS: "5000", MESSAGE_RETRY_MAX_MS: "1000" })).toEqual([
      expect.stringContaining("MESSAGE_RETRY_MAX_MS"),
    ]);
  });

  it("strips the SMTP password and the webhook secret before the config is logged", () => {
    const result = parseEnv({
      ...valid,
      EMAIL_TRANSPORT: "smtp",
      SMTP_HOST: "mail.example.com",
      EMAIL_FROM: "no-reply@example.com",
      SMTP_USERNAME: "tjm",
      SMTP_PASSWORD: "smtp-password-value",
      SMS_TRANSPORT: "webhook",
      SMS_WEBHOOK_URL: "https://gw:gateway-password@sms.example.com/hook",
      SMS_WEBHOOK_SECRET: "sms-webhook-secret-0123456789abcdefgh",
    });
    if (!result.ok) throw new Error(`expected a valid config: ${result.problems.join("; ")}`);
    const logged = JSON.stringify(redactConfig(result.config));
    expect(logged).not.toContain("smtp-password-value");
    expect(logged).not.toContain("sms-webhook-secret");
    expect(logged).not.toContain("gateway-password");
    expect(logged).toContain("sms.example.com");
  });

  it("takes NATS_URL as a comma-separated list of servers, each entry trimmed, and 1 stream replica by default", () => {
    const result = parseEnv({
      ...valid,
      NATS_URL: "nats://n1:4222, nats://n2:4222 ,tls://n3:4222",
    });
    expect(result).toMatchObject({
      ok: true,
      config: {
        NATS_URL: ["nats://n1:4222", "nats://n2:4222", "tls://n3:4222"],
        NATS_STREAM_REPLICAS: 1,
      },
    });
    expect(result.ok && result.config.NATS_WORKER_URL).toBeUndefined();
  });

  it.each([
    [
      "an http entry",
      "nats://n1:4222,http://n2:4222",
      'NATS_URL: entry 2 ("http://n2:4222") must be a nats or tls URL',
    ],
    ["an empty entry", "nats://n1:4222,,nats://n3:4222", 'NATS_URL: entry 2 ("") must be a nats or tls URL'],
    ["a trailing comma", "nats://n1:4222,", 'NATS_URL: entry 2 ("") must be a nats or tls URL'],
    ["a host without a scheme", "n1:4222", 'NATS_URL: entry 1 ("n1:4222") must be a nats or tls URL'],
  ])("refuses a NATS_URL with %s, naming the entry", (_, list, problem) => {
    expect(parseEnv({ ...valid, NATS_URL: list })).toEqual({ ok: false, problems: [problem] });
  });

  it("takes NATS_WORKER_URL as a list that may use WebSocket URLs, and checks each entry", () => {
    const result = parseEnv({
      ...valid,
      NATS_WORKER_URL: "wss://edge-1.example.com,wss://edge-2.example.com",
    });
    expect(result).toMatchObject({
      ok: true,
      config: {
        NATS_URL: ["nats://nats:4222"],
        NATS_WORKER_URL: ["wss://edge-1.example.com", "wss://edge-2.example.com"],
      },
    });
    expect(parseEnv({ ...valid, NATS_WORKER_URL: "wss://edge-1.example.com,ftp://edge-2" })).toEqual({
      ok: false,
      problems: ['NATS_WORKER_URL: entry 2 ("ftp://edge-2") must be a nats or tls or ws or wss URL'],
    });
  });

  it("refuses a server list for Workers that would not fit in the registration response", () => {
    const many = Array.from({ length: 100 }, (_, index) => `nats://nats-server-${index}.example.com:4222`);
    const result = parseEnv({ ...valid, NATS_URL: many.join(",") });
    expect(result.ok ? [] : result.problems).toEqual([
      "NATS_URL: the list handed to Workers must fit in 2048 characters, commas included",
    ]);
    expect(parseEnv({ ...valid, NATS_URL: many.join(","), NATS_WORKER_URL: "nats://nats:4222" }).ok).toBe(
      true,
    );
  });

  it.each([
    ["3", true],
    ["5", true],
    ["0", false],
    ["6", false],
    ["two", false],
  ])("NATS_STREAM_REPLICAS=%s is accepted: %s", (replicas, accepted) => {
    const result = parseEnv({ ...valid, NATS_STREAM_REPLICAS: replicas });
    expect(result.ok).toBe(accepted);
    if (result.ok) expect(result.config.NATS_STREAM_REPLICAS).toBe(Number(replicas));
  });

  it("masks the password of every server in both lists before the config is logged", () => {
    const result = parseEnv({
      ...valid,
      NATS_URL: "nats://n1:4222,nats://manager:pw1@n2:4222",
      NATS_WORKER_URL: "nats://worker:pw2@edge:4222",
    });
    if (!result.ok) throw new Error("expected a valid config");
    const logged = redactConfig(result.config);
    expect(logged.NATS_URL).toEqual(["nats://n1:4222", "nats://manager:***@n2:4222"]);
    expect(logged.NATS_WORKER_URL).toEqual(["nats://worker:***@edge:4222"]);
  });

  it("masks a secret added to the schema without its being listed anywhere else", () => {
    const extended = configSchema.safeExtend({
      WEBHOOK_SIGNING_KEY: secret(z.string().min(32).optional()),
    });
    const result = parseEnvironment(extended, {
      ...valid,
      WEBHOOK_SIGNING_KEY: "webhook-signing-key-0123456789abcdef",
    });
    if (!result.ok) throw new Error("expected a valid config");
    const logged = redactEnvironment(extended, result.config);
    expect(logged.WEBHOOK_SIGNING_KEY).toBe("***");
    expect(logged.S3_SECRET_ACCESS_KEY).toBe("***");
    expect(JSON.stringify(logged)).not.toContain("webhook-signing-key");
  });
});
