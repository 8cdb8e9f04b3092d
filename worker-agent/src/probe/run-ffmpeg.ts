/**
 * Runs ffmpeg once and collects what it printed. Uses only node:child_process calls Bun
 * also implements, so the agent runs on Bun and the tests on Node.
 */
import { spawn } from "node:child_process";

export interface FfmpegRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when ffmpeg outlived the timeout and was killed. */
  timedOut: boolean;
}

/** ffmpeg cannot be started at all: every probe and every job would fail the same way. */
export class FfmpegUnavailableError extends Error {
  override name = "FfmpegUnavailableError";
}

/**
 * On timeout ffmpeg gets SIGKILL, not SIGTERM: a process stuck inside a GPU driver call
 * never reaches the point where ffmpeg checks for a termination request.
 */
export function runFfmpeg(
  ffmpegPath: string,
  args: readonly string[],
  timeoutMs: number,
  tool: ToolName = FFMPEG,
): Promise<FfmpegRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(unavailableError(ffmpegPath, error, tool));
    });
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr, timedOut });
    });
  });
}

export function describeExit(run: FfmpegRun): string {
  return run.signal === null ? `exited with code ${run.exitCode}` : `killed by ${run.signal}`;
}

/** Which binary a run starts, and the setting that chooses it, for the errors that name them. */
export interface ToolName {
  tool: string;
  envVar: string;
}

const FFMPEG: ToolName = { tool: "ffmpeg", envVar: "FFMPEG_PATH" };

/** A spawn error: ENOENT and EACCES become FfmpegUnavailableError, others are returned as they are. */
export function unavailableError(
  path: string,
  error: NodeJS.ErrnoException,
  { tool, envVar }: ToolName = FFMPEG,
): Error {
  switch (error.code) {
    case "ENOENT":
      return new FfmpegUnavailableError(`${tool} not found at ${path}: set ${envVar}`);
    case "EACCES":
      return new FfmpegUnavailableError(`${tool} at ${path} is not executable: set ${envVar}`);
    default:
      return error;
  }
}
