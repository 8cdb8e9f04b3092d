/**
 * `npm run demo`: finds (or starts) PostgreSQL and NATS, migrates a demo schema, starts the
 * Manager, submits a sample job through the SDK and prints it with the docs URL.
 * `npm run demo -- --once` exits after printing instead of serving until Ctrl-C.
 */
import { randomBytes } from "node:crypto";
import { createTjmClient } from "@tjm/sdk";
import { createSql } from "../manager/src/platform/db.ts";
import { loadMigrations, migrate } from "../manager/src/platform/migrations.ts";
import { createProject } from "../manager/src/projects/store.ts";
import { startManagerProcess } from "../tests/harness/manager-process.ts";
import { OPERATIONS_AUDIENCE, TestIssuer } from "../tests/harness/oidc.ts";
import { samplePlan } from "../tests/harness/plans.ts";
import { canConnect, findOrStartServices, freePort } from "../tests/harness/services.ts";

const once = process.argv.includes("--once");
const say = (line: string) => console.log(line);
const schema = process.env.DEMO_SCHEMA ?? "tjm_demo";

const services = await findOrStartServices((line) => say(`• ${line}`));
// A local OIDC issuer with its own key pair stands in for your identity provider.
const issuer = await TestIssuer.start();
const cleanups: (() => Promise<unknown>)[] = [() => services.stop(), () => issuer.close()];
const cleanup = async () => {
  for (const step of cleanups.reverse()) await step().catch(() => {});
};

try {
  const sql = createSql({ url: services.databaseUrl, schema, poolMax: 2, applicationName: "tjm-demo" });
  const applied = await migrate(sql, schema, await loadMigrations());
  say(
    `• migrations: ${applied.length ? `applied ${applied.map((m) => m.name).join(", ")}` : "up to date"} (schema ${schema})`,
  );
  await sql.end();

  const env = {
    DATABASE_URL: services.databaseUrl,
    DATABASE_SCHEMA: schema,
    NATS_URL: services.natsUrl,
    OIDC_ISSUER_URL: issuer.issuer,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    // A fresh key per demo run: tokens issued by an earlier run simply stop matching.
    ENROLLMENT_TOKEN_SECRET: randomBytes(32).toString("hex"),
    // The demo's NATS has no accounts; the Manager says so in a warning at start.
    NATS_AUTH: "none",
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
    LOG_LEVEL: "warn",
  };
  // 8080 (or PORT) when it is free, so the printed URLs are easy to remember.
  const wanted = Number(process.env.PORT ?? 8080);
  const taken = wanted === 0 || (await canConnect(`http://127.0.0.1:${wanted}`));
  const port = taken ? await freePort() : wanted;
  const manager = await startManagerProcess("node", env, port);
  cleanups.push(() => manager.stop());
  say(`• Manager on Node at ${manager.baseUrl}`);

  const projectSql = createSql({
    url: services.databaseUrl,
    schema,
    poolMax: 1,
    applicationName: "tjm-demo",
  });
  const { projectId } = await createProject(projectSql, "demo", `demo-${new Date().toISOString()}`);
  await projectSql.end();

  const token = await issuer.token({ expiresInSeconds: 3600 });
  const client = createTjmClient({ baseUrl: manager.baseUrl, token });
  const submitted = await client.POST("/api/v1/operations/jobs", {
    body: { projectId, executionPlan: samplePlan() as never },
  });
  if (!submitted.data) throw new Error(`submit failed: ${JSON.stringify(submitted.error)}`);
  const detail = await client.GET("/api/v1/operations/jobs/{jobId}", {
    params: { path: { jobId: submitted.data.id } },
  });

  say("\nSubmitted a sample job through the SDK:");
  say(JSON.stringify(detail.data, null, 2));
  say(`\nAPI docs (Scalar):  ${manager.baseUrl}/api/docs`);
  say(`OpenAPI document:   ${manager.baseUrl}/api/v1/openapi.json`);
  say(`Operator token (1 h): ${token}`);
  say(`Try: curl -H "authorization: Bearer $TOKEN" ${manager.baseUrl}/api/v1/operations/jobs`);
  say("\nNo Worker runs yet, so the job stays QUEUED; Workers and transcoding arrive in later stages.");

  if (!once) {
    say("\nServing until Ctrl-C.");
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
  }
} finally {
  await cleanup();
}
