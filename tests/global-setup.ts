import { findOrStartServices } from "@tjm/devstack/services";
import { reapOrphanedSwift } from "@tjm/devstack/swift";
import type { TestProject } from "vitest/node";
import { createSql } from "../manager/src/platform/db.ts";

/**
 * Finds or starts PostgreSQL and NATS once per run; every test file isolates itself inside
 * them. At the end, any schema of this run a crashed or interrupted file left behind is dropped,
 * and any Swift server a test file left running is killed by its recorded PID.
 */
export default async function setup(project: TestProject) {
  console.log(`[runtime] Node ${process.version} (${process.execPath})`);
  const services = await findOrStartServices((line) => console.log(`[services] ${line}`));
  const schemaPrefix = `t_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}_`;
  project.provide("databaseUrl", services.databaseUrl);
  project.provide("natsUrl", services.natsUrl);
  project.provide("schemaPrefix", schemaPrefix);
  return async () => {
    const sql = createSql({
      url: services.databaseUrl,
      schema: "public",
      poolMax: 1,
      applicationName: "tjm-tests",
    });
    const leftovers = await sql<{ name: string }[]>`
      select nspname as name from pg_namespace where starts_with(nspname, ${schemaPrefix})`;
    for (const { name } of leftovers) await sql`drop schema if exists ${sql(name)} cascade`;
    await sql.end();
    await services.stop();
    // Every test process has ended by now: any Swift server still running lost its owner.
    const killed = await reapOrphanedSwift();
    if (killed > 0) console.log(`[services] killed ${killed} Swift server(s) a test file left running`);
  };
}
