/** The bench's Managers: the harness's Manager processes with bench settings and cleanup. */
import { randomBytes } from "node:crypto";
import {
  type ManagerProcess,
  type ManagerRuntime,
  runScript,
  startManagerProcess,
} from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
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
  /** The bench's TestIssuer, trusted as an external operator issuer: operations tokens only. */
  OIDC_OPERATOR_ISSUER_URL: string;
  /** TJM's issuer: the Manager's own provider when PROVIDER_ENABLED is "true". */
  OIDC_ISSUER_URL: string;
  PROVIDER_ENABLED: "true" | "false";
}

/**
 * TJM's issuer of a Manager without its provider. Every scenario but auth sends the TestIssuer's
 * tokens only, as before the built-in provider came: they skip the per-request standing check
 * that tokens of TJM's issuer get, so their numbers stay comparable with earlier runs (the auth
 * scenario measures that check). No token names this issuer, so nothing ever fetches it.
 */
const UNUSED_TJM_ISSUER = "http://127.0.0.1:1/oidc";

/** Keys of this bench run's providers (and of the CLI that stores client secrets for them). */
const PROVIDER_KEYS = {
  PROVIDER_KEY_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
  CLIENT_SECRET_HMAC_KEY: randomBytes(32).toString("hex"),
};

function childEnvironment(env: ManagerEnvironment): Record<string, string> {
  return {
    ...env,
    ...PROVIDER_KEYS,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
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
async function runNpmScript(
  script: string,
  args: string[],
  env: ManagerEnvironment,
  stdin?: string,
): Promise<string> {
  const npmArgs = [script, ...(args.length ? ["--", ...args] : [])];
  const { code, stdout, stderr } = await runScript(npmArgs, childEnvironment(env), stdin);
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
    OIDC_OPERATOR_ISSUER_URL: context.operatorIssuerUrl,
    OIDC_ISSUER_URL: UNUSED_TJM_ISSUER,
    PROVIDER_ENABLED: "false",
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
 * The same environment with the Manager serving its built-in provider on `port` (the issuer
 * URL names it, so it is chosen before the Manager starts); the TestIssuer stays trusted for
 * operations.
 */
export function withProvider(env: ManagerEnvironment, port: number): ManagerEnvironment {
  return { ...env, OIDC_ISSUER_URL: `http://127.0.0.1:${port}/oidc`, PROVIDER_ENABLED: "true" };
}

/** `npm run manager -- accounts create`, the password on stdin; resolves with the account's id. */
export async function createAccount(
  env: ManagerEnvironment,
  account: { email: string; password: string; roles: string[] },
): Promise<string> {
  const args = [
    "accounts",
    "create",
    "--email",
    account.email,
    ...account.roles.flatMap((role) => ["--role", role]),
  ];
  const output = await runNpmScript("manager", args, env, `${account.password}\n`);
  return (JSON.parse(output.trim()) as { accountId: string }).accountId;
}

/** `npm run manager -- clients create <args>`; its id, and its secret unless it is public. */
export async function createClient(
  env: ManagerEnvironment,
  args: string[],
): Promise<{ clientId: string; clientSecret?: string }> {
  const output = await runNpmScript("manager", ["clients", "create", ...args], env);
  return JSON.parse(output.trim()) as { clientId: string; clientSecret?: string };
}

export interface StartOptions {
  /** Runs the Node entrypoint on this Node binary instead of the npm script's. */
  nodeBinary?: string;
  /** Listen here instead of on a free port (withProvider's port). */
  port?: number;
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
  options: StartOptions = {},
): Promise<ManagerProcess> {
  const manager = await startManagerProcess(
    runtime,
    { ...childEnvironment(env), ...settings },
    options.port,
    {
      nodeBinary: options.nodeBinary,
    },
  );
  cleanup.defer(`stop the ${options.nodeBinary ?? runtime} Manager`, manager.stop);
  return manager;
}
