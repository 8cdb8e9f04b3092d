/** The bench's Managers: the harness's Manager processes with bench settings and cleanup. */
import { randomBytes } from "node:crypto";
import {
  type ManagerProcess,
  type ManagerRuntime,
  runScript,
  startManagerProcess,
} from "@tjm/devstack/manager-process";
import { deleteStreams } from "@tjm/devstack/streams";
import type { BenchContext } from "../scenario.ts";
import type { Cleanup } from "./cleanup.ts";
import { dropSchemaAtEnd } from "./database.ts";

export { type ManagerRuntime, REPOSITORY_ROOT } from "@tjm/devstack/manager-process";

export interface ManagerEnvironment {
  DATABASE_URL: string;
  DATABASE_SCHEMA: string;
  NATS_URL: string;
  NATS_SUBJECT_PREFIX: string;
  OIDC_ISSUER_URL: string;
}

function childEnvironment(env: ManagerEnvironment): Record<string, string> {
  return {
    ...env,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: "tjm-operations",
    ENROLLMENT_TOKEN_SECRET: randomBytes(32).toString("hex"),
    // The bench's NATS is the machine's open one; the Manager's NATS auth is not what it measures.
    NATS_AUTH: "none",
    // No job is executed, so object storage is never reached.
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
    LOG_LEVEL: "warn",
  };
}

/** Runs `npm run --silent <script> -- <args>` to completion; resolves with its stdout, rejects on failure. */
async function runNpmScript(script: string, args: string[], env: ManagerEnvironment): Promise<string> {
  const npmArgs = [script, ...(args.length ? ["--", ...args] : [])];
  const { code, stdout, stderr } = await runScript(npmArgs, childEnvironment(env));
  if (code !== 0)
    throw new Error(`npm run ${npmArgs.join(" ")} exited with ${code}: ${stderr.trim() || stdout.trim()}`);
  return stdout;
}

/**
 * A Manager's environment on a fresh schema `bench_<run>_<name>`, migrated with `npm run
 * migrate`, and the subject prefix of the same name; the schema and the streams the Manager's
 * relay creates for that prefix are removed when the run ends.
 */
export async function freshManagerSchema(
  context: BenchContext,
  name: string,
): Promise<{ schema: string; env: ManagerEnvironment }> {
  const schema = `bench_${context.runId}_${name}`;
  dropSchemaAtEnd(context.admin, schema, context.cleanup);
  context.cleanup.defer(`delete the streams of ${schema}`, () => deleteStreams(context.natsUrl, schema));
  const env: ManagerEnvironment = {
    DATABASE_URL: context.databaseUrl,
    DATABASE_SCHEMA: schema,
    NATS_URL: context.natsUrl,
    NATS_SUBJECT_PREFIX: schema,
    OIDC_ISSUER_URL: context.issuerUrl,
  };
  await runNpmScript("migrate", [], env);
  return { schema, env };
}

export async function createProject(
  env: ManagerEnvironment,
  org: string,
  name: string,
): Promise<{ organizationId: string; projectId: string }> {
  const output = await runNpmScript("manager", ["projects", "create", "--org", org, "--name", name], env);
  return JSON.parse(output.trim()) as { organizationId: string; projectId: string };
}

/**
 * Starts a Manager and waits until it is ready; `cleanup` stops it if the run ends first.
 * `settings` adds to (or overrides) the bench's environment, e.g. HEARTBEAT_INTERVAL_MS.
 */
export async function startManager(
  runtime: ManagerRuntime,
  env: ManagerEnvironment,
  cleanup: Cleanup,
  settings: Record<string, string> = {},
  nodeBinary?: string,
): Promise<ManagerProcess> {
  const manager = await startManagerProcess(runtime, { ...childEnvironment(env), ...settings }, undefined, {
    nodeBinary,
  });
  cleanup.defer(`stop the ${nodeBinary ?? runtime} Manager`, manager.stop);
  return manager;
}
