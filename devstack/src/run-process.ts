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
