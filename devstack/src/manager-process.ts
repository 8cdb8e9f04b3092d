/**
 * The Manager as an operator runs it: `npm run manager` (Node) or `npm run manager:deno`,
 * configured through the environment, in its own process group so that npm, tsx/deno and
 * the Manager stop together. Used by the tests, the demo and the bench.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type ProcessResult, runProcess, stopProcessGroup } from "./run-process.ts";
import { freePort, waitFor } from "./services.ts";

export const REPOSITORY_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export type ManagerRuntime = "node" | "deno";

const NPM_SCRIPTS: Record<ManagerRuntime, string> = { node: "manager", deno: "manager:deno" };
const START_TIMEOUT_MS = 60_000;
/** SIGTERM first; a group still alive after this gets SIGKILL. */
const STOP_GRACE_MS = 15_000;

export interface ManagerProcess {
  runtime: ManagerRuntime;
  baseUrl: string;
  output(): string;
  stop(): Promise<void>;
  /** SIGKILL to the whole group at once, as a crash or an OOM kill ends it; resolves once it is gone. */
  kill(): Promise<void>;
}

/**
 * Runs an npm script of the repository with the given environment and collects its output;
 * `stdin` is written to its standard input, which is then closed (at once without it).
 */
export function runScript(args: string[], env: Record<string, string>, stdin = ""): Promise<ProcessResult> {
  return runProcess("npm", ["run", "--silent", ...args], {
    cwd: REPOSITORY_ROOT,
    env: { ...process.env, ...env },
    stdin,
  });
}

/**
 * Runs the Node Manager's command line (`npm run manager -- …args`) on this process's Node,
 * `node --import tsx …` as the npm script's tsx does, without npm in between: npm alone costs
 * about a third of a second of CPU per command, and some test files run dozens of commands.
 */
export function runManagerCommand(
  args: string[],
  env: Record<string, string>,
  stdin = "",
): Promise<ProcessResult> {
  const [command, nodeArgs] = managerCommand("node", process.execPath);
  return runProcess(command, [...nodeArgs, ...args], {
    cwd: REPOSITORY_ROOT,
    env: { ...process.env, ...env },
    stdin,
  });
}

/**
 * The command that starts the Manager: its npm script, or (`nodeBinary`) the Node entrypoint
 * on another Node the way an operator runs it on their own, `node --import tsx …`.
 */
function managerCommand(runtime: ManagerRuntime, nodeBinary: string | undefined): [string, string[]] {
  if (nodeBinary === undefined) return ["npm", ["run", "--silent", NPM_SCRIPTS[runtime]]];
  if (runtime !== "node") throw new Error(`a Node binary runs only the node Manager, not ${runtime}`);
  return [nodeBinary, ["--import", "tsx", "manager/src/main.node.ts"]];
}

/** Starts a Manager on `port` (a free one by default) and resolves once it is ready. */
export async function startManagerProcess(
  runtime: ManagerRuntime,
  env: Record<string, string>,
  port?: number,
  options: { nodeBinary?: string } = {},
): Promise<ManagerProcess> {
  port ??= await freePort();
  const [command, args] = managerCommand(runtime, options.nodeBinary);
  const child: ChildProcess = spawn(command, args, {
    cwd: REPOSITORY_ROOT,
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
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const pid = child.pid as number;
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = () => stopProcessGroup(pid, closed, STOP_GRACE_MS);
  const kill = async () => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
    await closed;
  };
  try {
    await waitFor(
      `the ${runtime} Manager on port ${port}`,
      async () => {
        if (child.exitCode !== null) {
          throw new Error(`the ${runtime} Manager exited with ${child.exitCode}:\n${output}`);
        }
        return fetch(`${baseUrl}/api/health/ready`).then(
          (response) => response.status === 200,
          () => false,
        );
      },
      START_TIMEOUT_MS,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { runtime, baseUrl, output: () => output, stop, kill };
}
