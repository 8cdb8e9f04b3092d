/**
 * `npm run manager -- enrollment-tokens issue`, the way compose.yaml's token services run it: a
 * real CLI process against a migrated schema, its token then spent as a registration would.
 */
import { runScript } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_ISSUER, ISSUE_USAGE } from "../../manager/src/enrollment/cli.ts";
import { consumeEnrollmentToken, createTokenHasher } from "../../manager/src/enrollment/index.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
});
afterAll(() => schema?.drop());

function env(): Record<string, string> {
  const services = testServices();
  return {
    DATABASE_URL: services.databaseUrl,
    DATABASE_SCHEMA: schema.schema,
    NATS_URL: services.natsUrl,
    NATS_AUTH: "none",
    OIDC_ISSUER_URL: "http://127.0.0.1:1",
    PROVIDER_ENABLED: "false",
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    // Never reached: the command touches only the database.
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
  };
}

/** A tsx process takes 2–5 s on a loaded 2-core machine; one case starts up to three. */
const CLI_TEST_TIMEOUT_MS = 90_000;

const issue = (args: string[]) => runScript(["manager", "--", "enrollment-tokens", "issue", ...args], env());

describe("manager enrollment-tokens issue", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("prints one JSON line with the token once, stores only its HMAC, and the token enrolls once", async () => {
    const before = Date.now();
    const result = await issue(["--pool", "cpu", "--ttl-seconds", "600", "--label", "worker-cpu-1"]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const printed = JSON.parse(lines[0] ?? "");
    expect(printed).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(/^tjm_et_[A-Za-z0-9_-]{43}$/),
      expiresAt: expect.any(String),
      pool: "cpu",
      label: "worker-cpu-1",
    });
    const lifetime = Date.parse(printed.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(590_000);
    expect(lifetime).toBeLessThan(610_000 + 30_000);

    const hash = await createTokenHasher(TEST_ENROLLMENT_SECRET)(printed.token);
    const [row] = await schema.sql`select * from enrollment_tokens where id = ${printed.id}`;
    expect(Buffer.from(row?.tokenHash)).toEqual(Buffer.from(hash));
    expect(row).toMatchObject({ pool: "cpu", label: "worker-cpu-1", createdBy: CLI_ISSUER, usedAt: null });
    expect(JSON.stringify(await schema.sql`select * from enrollment_tokens`)).not.toContain(
      printed.token.slice("tjm_et_".length),
    );

    // What a registration does with it: the first use takes it, the second finds nothing.
    expect(await consumeEnrollmentToken(schema.sql, hash)).toEqual({
      id: printed.id,
      pool: "cpu",
      label: "worker-cpu-1",
    });
    expect(await consumeEnrollmentToken(schema.sql, hash)).toBeUndefined();
  });

  it("without options issues a one-hour token for any pool", async () => {
    const result = await issue([]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ pool: null, label: null });
  });

  it("refuses bad options with exit 2, every problem named, and stores nothing", async () => {
    const [{ count: before }] = (await schema.sql`select count(*)::int from enrollment_tokens`) as [
      { count: number },
    ];
    const result = await issue(["--pool", "tpu", "--ttl-seconds", "30", "--token", "mine"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")[0]).toBe("enrollment-tokens issue: unknown option --token");
    const again = await issue(["--pool", "tpu", "--ttl-seconds", "30"]);
    expect(again.code).toBe(2);
    expect(again.stderr.split("\n").slice(0, 2)).toEqual([
      'enrollment-tokens issue: --ttl-seconds: Too small: expected number to be >=60; --pool: Invalid option: expected one of "cpu"|"nvidia"|"intel"|"amd"',
      ISSUE_USAGE,
    ]);
    const [{ count: after }] = (await schema.sql`select count(*)::int from enrollment_tokens`) as [
      { count: number },
    ];
    expect(after).toBe(before);
  });
});
