import type { TestProject } from "vitest/node";
import { findOrStartServices } from "./harness/services.ts";

/** Finds or starts PostgreSQL and NATS once per run; every test file isolates itself inside them. */
export default async function setup(project: TestProject) {
  const services = await findOrStartServices((line) => console.log(`[services] ${line}`));
  project.provide("databaseUrl", services.databaseUrl);
  project.provide("natsUrl", services.natsUrl);
  return () => services.stop();
}
