import { describe, expect, inject, it } from "vitest";
import { createSql } from "../manager/src/platform/db.ts";
import { testServices } from "./harness/manager.ts";
import { runScript } from "./harness/manager-process.ts";
import { deleteStreams } from "./harness/streams.ts";

describe("npm run demo", () => {
  it("migrates, starts the Manager, submits a sample job through the SDK and prints it with the docs URL", async () => {
    const services = testServices();
    const schema = `${inject("schemaPrefix")}demo_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const result = await runScript(["demo", "--", "--once"], {
      DATABASE_URL: services.databaseUrl,
      NATS_URL: services.natsUrl,
      DEMO_SCHEMA: schema,
      NATS_SUBJECT_PREFIX: schema,
      PORT: "0",
    });
    const sql = createSql({ url: services.databaseUrl, schema: "public", poolMax: 1 });
    await sql`drop schema if exists ${sql(schema)} cascade`;
    await sql.end();
    await deleteStreams(services.natsUrl, schema);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Manager on Node at http:\/\/127\.0\.0\.1:\d+/);
    expect(result.stdout).toContain('"state": "QUEUED"');
    expect(result.stdout).toMatch(/API docs \(Scalar\): +http:\/\/127\.0\.0\.1:\d+\/api\/docs/);
  }, 90_000);
});
