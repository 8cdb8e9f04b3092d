/**
 * The Manager exactly as an operator runs it: `npm run manager` (Node) or `npm run
 * manager:deno`, configured through the environment, each in its own process group so that
 * npm, tsx and the Manager are stopped together.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { freePort, waitFor } from "../tests/harness/services.ts";
import type { Cleanup } from "./cleanup.ts";

export const REPOSITORY_ROOT = fileURLToPath(new URL("..", import.meta.url));

export type ManagerRuntime = "node" | "deno";

const NPM_SCRIPTS: Record<ManagerRuntime, string> = { node: "manager", deno: "manager:deno" };
const STOP_GRACE_MS = 15_000;
const START_TIMEOUT_MS = 60_000;
const OUTPUT_KEPT_CHARS = 4000;

export interface ManagerEnvironment {
  DATABASE_URL: string;
  DATABASE_SCHEMA: string;
  NATS_URL: string;
  NATS_SUBJECT_PREFIX: string;
  OIDC_ISSUER_URL: string;
}

function childEnvironment(env: ManagerEnvironment, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...env,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: "tjm-operations",
    ENROLLMENT_TOKEN_SECRET: randomBytes(32).toString("hex"),
    LOG_LEVEL: "warn",
    ...extra,
  };
}

/** Keeps the tail of a child's output to explain a failure. */
function captureOutput(child: ChildProcess): () => string {
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_KEPT_CHARS);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return () => output.trim();
}

/** Runs `npm run --silent <script> -- <args>` to completion; resolves with its stdout. */
export function runNpmScript(script: string, args: string[], env: ManagerEnvironment): Promise<string> {
  const npmArgs = ["run", "--silent", script, ...(args.length ? ["--", ...args] : [])];
  const child = spawn("npm", npmArgs, { cwd: REPOSITORY_ROOT, env: childEnvironment(env) });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve(stdout)
        : reject(
            new Error(`npm ${npmArgs.join(" ")} exited with ${code}: ${stderr.trim() || stdout.trim()}`),
          ),
    );
  });
}

export async function migrateSchema(env: ManagerEnvironment): Promise<void> {
  await runNpmScript("migrate", [], env);
}

export async function createProject(
  env: ManagerEnvironment,
  org: string,
  name: string,
): Promise<{ organizationId: string; projectId: string }> {
  const output = await runNpmScript("manager", ["projects", "create", "--org", org, "--name", name], env);
  return JSON.parse(output.trim()) as { organizationId: string; projectId: string };
}

function groupExists(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface ManagerProcess {
  runtime: ManagerRuntime;
  baseUrl: string;
  stop(): Promise<void>;
}

/** Starts a Manager and waits until it is ready; `cleanup` stops it if the run ends first. */
export async function startManager(
  runtime: ManagerRuntime,
  env: ManagerEnvironment,
  cleanup: Cleanup,
): Promise<ManagerProcess> {
  const port = await freePort();
  const child = spawn("npm", ["run", "--silent", NPM_SCRIPTS[runtime]], {
    cwd: REPOSITORY_ROOT,
    env: childEnvironment(env, { HOST: "127.0.0.1", PORT: String(port) }),
    detached: true,
  });
  const output = captureOutput(child);
  const pid = child.pid as number;
  const baseUrl = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (!groupExists(pid)) return;
    process.kill(-pid, "SIGTERM");
    const deadline = Date.now() + STOP_GRACE_MS;
    while (groupExists(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (groupExists(pid)) process.kill(-pid, "SIGKILL");
  };
  cleanup.defer(`stop the ${runtime} Manager`, stop);

  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) =>
      reject(new Error(`the ${runtime} Manager exited with ${code} before it was ready:\n${output()}`)),
    ),
  );
  exited.catch(() => {});
  const ready = async () => {
    try {
      return (await fetch(`${baseUrl}/api/health/ready`)).status === 200;
    } catch {
      return false;
    }
  };
  await Promise.race([waitFor(`the ${runtime} Manager on port ${port}`, ready, START_TIMEOUT_MS), exited]);
  return { runtime, baseUrl, stop };
}
