import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnv, redactConfig } from "./config.ts";

const minimal = {
  MANAGER_URL: "http://manager:8080",
  WORKER_STATE_DIR: "/var/lib/tjm-worker",
  WORKER_WORK_DIR: "/var/cache/tjm-worker",
};

describe("parseEnv", () => {
  it("applies the documented defaults", () => {
    expect(parseEnv(minimal, "host-1")).toEqual({
      ok: true,
      config: {
        ...minimal,
        WORKER_POOL: "cpu",
        WORKER_NAME: "host-1",
        WORKER_STARTUP_TIMEOUT_MS: 60_000,
        WORKER_UPLOAD_RETRY_BUDGET_MS: 30_000,
        WORKER_UPLOAD_RETRY_ATTEMPTS: 5,
        WORKER_UPLOAD_CONCURRENCY: 16,
        WORKER_INPUT_STREAMING: "on",
        WORKER_INPUT_WAIT_MAX_MS: 86_400_000,
        WORKER_METRICS_PORT: 9464,
        WORKER_METRICS_HOST: "127.0.0.1",
        LOG_LEVEL: "info",
      },
    });
  });

  it("reads every variable", () => {
    const result = parseEnv(
      {
        ...minimal,
        ENROLLMENT_TOKEN: "tjm_0123456789abcdef",
        WORKER_POOL: "nvidia",
        WORKER_NAME: "gpu-box",
        WORKER_CAPACITY: "3",
        FFMPEG_PATH: "/opt/ffmpeg/bin/ffmpeg",
        FFPROBE_PATH: "/opt/ffmpeg/bin/ffprobe",
        LOG_LEVEL: "debug",
        WORKER_STARTUP_TIMEOUT_MS: "1500",
        WORKER_UPLOAD_PART_SIZE_MIB: "64",
        WORKER_UPLOAD_CONCURRENCY: "8",
        WORKER_METRICS_PORT: "9100",
        WORKER_METRICS_HOST: "0.0.0.0",
      },
      "ignored",
    );
    expect(result).toMatchObject({
      ok: true,
      config: {
        WORKER_POOL: "nvidia",
        WORKER_NAME: "gpu-box",
        WORKER_CAPACITY: 3,
        WORKER_STARTUP_TIMEOUT_MS: 1500,
        WORKER_UPLOAD_PART_SIZE_MIB: 64,
        WORKER_UPLOAD_CONCURRENCY: 8,
        WORKER_METRICS_PORT: 9100,
        WORKER_METRICS_HOST: "0.0.0.0",
      },
    });
  });

  it("WORKER_METRICS_PORT=0 turns metrics off; a port out of range or a host with spaces is refused", () => {
    const off = parseEnv({ ...minimal, WORKER_METRICS_PORT: "0", WORKER_METRICS_HOST: "::1" }, "host");
    expect(off).toMatchObject({ ok: true, config: { WORKER_METRICS_PORT: 0, WORKER_METRICS_HOST: "::1" } });
    expect(
      parseEnv({ ...minimal, WORKER_METRICS_PORT: "65536", WORKER_METRICS_HOST: "local host" }, "host"),
    ).toEqual({
      ok: false,
      problems: [
        "WORKER_METRICS_PORT: Too big: expected number to be <=65535",
        "WORKER_METRICS_HOST: must be a host name or an IP address",
      ],
    });
  });

  it("lists every problem at once, naming each variable", () => {
    expect(
      parseEnv(
        {
          MANAGER_URL: "nats://manager:4222",
          ENROLLMENT_TOKEN: "short",
          WORKER_POOL: "gpu",
          WORKER_CAPACITY: "0",
          WORKER_STARTUP_TIMEOUT_MS: "soon",
          LOG_LEVEL: "loud",
          WORKER_UPLOAD_PART_SIZE_MIB: "4",
        },
        "host",
      ),
    ).toEqual({
      ok: false,
      problems: [
        "MANAGER_URL: must be an http or https URL",
        "ENROLLMENT_TOKEN: Too small: expected string to have >=16 characters",
        "WORKER_STARTUP_TIMEOUT_MS: Invalid input: expected number, received NaN",
        "WORKER_STATE_DIR: required but not set",
        "WORKER_WORK_DIR: required but not set",
        'WORKER_POOL: Invalid option: expected one of "cpu"|"nvidia"|"intel"|"amd"',
        "WORKER_CAPACITY: Too small: expected number to be >=1",
        "WORKER_UPLOAD_PART_SIZE_MIB: Too small: expected number to be >=5",
        'LOG_LEVEL: Invalid option: expected one of "debug"|"info"|"warn"|"error"',
      ],
    });
  });

  it("treats an empty variable as unset", () => {
    const result = parseEnv({ ...minimal, ENROLLMENT_TOKEN: "", WORKER_CAPACITY: "" }, "host");
    expect(result.ok && result.config.ENROLLMENT_TOKEN).toBeUndefined();
    expect(result.ok && result.config.WORKER_CAPACITY).toBeUndefined();
  });

  it("resolves relative directories against the working directory", () => {
    const result = parseEnv({ ...minimal, WORKER_STATE_DIR: "state", WORKER_WORK_DIR: "./work" }, "host");
    expect(result).toMatchObject({
      ok: true,
      config: { WORKER_STATE_DIR: resolve("state"), WORKER_WORK_DIR: resolve("work") },
    });
  });

  it("refuses a token with spaces and a name with control characters", () => {
    const result = parseEnv(
      { ...minimal, ENROLLMENT_TOKEN: "a token with spaces", WORKER_NAME: "two\nlines" },
      "host",
    );
    expect(result).toEqual({
      ok: false,
      problems: [
        "ENROLLMENT_TOKEN: must be printable ASCII without spaces",
        "WORKER_NAME: must be one line without control characters",
      ],
    });
  });

  it("defaults the name to the host name, made a valid one-line name", () => {
    const long = `${"h".repeat(200)}\u0007`;
    const result = parseEnv(minimal, long);
    expect(result.ok && result.config.WORKER_NAME).toBe("h".repeat(128));
    const empty = parseEnv(minimal, "");
    expect(empty.ok && empty.config.WORKER_NAME).toBe("worker");
  });
});

describe("redactConfig", () => {
  it("masks the enrollment token", () => {
    const result = parseEnv({ ...minimal, ENROLLMENT_TOKEN: "tjm_0123456789abcdef" }, "host");
    if (!result.ok) throw new Error("expected a valid config");
    expect(redactConfig(result.config)).toMatchObject({
      ENROLLMENT_TOKEN: "***",
      MANAGER_URL: minimal.MANAGER_URL,
    });
    expect(JSON.stringify(redactConfig(result.config))).not.toContain("0123456789abcdef");
  });
});
