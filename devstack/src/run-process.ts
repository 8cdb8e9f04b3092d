import { spawn } from "node:child_process";

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion with exactly `env` and collects its output; `stdin` is written
 * to its standard input, which is then closed (at once without it).
 */
export function runProcess(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; stdin?: string },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.once("error", reject);
    // A command that exits without reading its input must not fail the caller with EPIPE.
    child.stdin.on("error", () => {});
    child.stdin.end(options.stdin ?? "");
    // "close" waits for every process holding the output pipes (npm exits before its child).
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function groupExists(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops a process started in its own group (`detached`): SIGTERM to the group, SIGKILL to what
 * is left after `graceMs`, then waits for `closed` (the child's close event).
 */
export async function stopProcessGroup(pid: number, closed: Promise<void>, graceMs: number): Promise<void> {
  if (groupExists(pid)) {
    process.kill(-pid, "SIGTERM");
    const deadline = Date.now() + graceMs;
    while (groupExists(pid) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    if (groupExists(pid)) process.kill(-pid, "SIGKILL");
  }
  await closed;
}
