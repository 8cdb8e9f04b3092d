/** The Manager as a real child process (`npm run manager` or `npm run manager:deno`). */
import { type ChildProcess, spawn } from "node:child_process";
import { freePort, waitFor } from "./services.ts";

export type ManagerRuntime = "node" | "deno";

export interface ManagerProcess {
  baseUrl: string;
  output(): string;
  stop(): Promise<number | null>;
}

const repositoryRoot = new URL("../../", import.meta.url).pathname;

/** Runs an npm script of the repository with the given environment and collects its output. */
export function runScript(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "--silent", ...args], {
      cwd: repositoryRoot,
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

export async function startManagerProcess(
  runtime: ManagerRuntime,
  env: Record<string, string>,
  port?: number,
): Promise<ManagerProcess> {
  port ??= await freePort();
  const script = runtime === "node" ? "manager" : "manager:deno";
  // detached: the npm -> tsx/deno chain gets its own process group, stopped as a whole.
  const child: ChildProcess = spawn("npm", ["run", "--silent", script], {
    cwd: repositoryRoot,
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  // "close" waits for every process holding the output pipes (npm exits before its child).
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.pid) process.kill(-child.pid, "SIGTERM");
    return exited;
  };
  try {
    await waitFor(
      `the ${runtime} Manager`,
      async () => {
        if (child.exitCode !== null)
          throw new Error(`the ${runtime} Manager exited with ${child.exitCode}:\n${output}`);
        return fetch(`${baseUrl}/api/health/live`).then(
          (response) => response.ok,
          () => false,
        );
      },
      60_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { baseUrl, output: () => output, stop };
}
