import { describe, expect, it } from "vitest";
import { parseEnv, redactConfig } from "./config.ts";

const valid = {
  DATABASE_URL: "postgres://tjm:secret@db:5432/tjm",
  NATS_URL: "nats://nats:4222",
  OIDC_ISSUER_URL: "https://id.example.com/realms/media",
  OIDC_OPERATIONS_ADMIN_AUDIENCE: "tjm-operations",
  ENROLLMENT_TOKEN_SECRET: "0123456789abcdef0123456789abcdef",
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

  it("masks passwords before the config is logged", () => {
    const result = parseEnv({ ...valid, NATS_URL: "nats://worker:pw@nats:4222" });
    if (!result.ok) throw new Error("expected a valid config");
    const logged = JSON.stringify(redactConfig(result.config));
    expect(logged).not.toContain("secret");
    expect(logged).not.toContain(":pw@");
    expect(logged).not.toContain("0123456789abcdef");
  });
});
