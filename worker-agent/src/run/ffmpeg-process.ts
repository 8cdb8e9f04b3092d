/**
 * Runs one ffmpeg encode: progress from stdout (`-progress pipe:1`), the whole stderr to a
 * log file, the last 64 KiB of it kept for the failure message, and cancellation. Uses only
 * node:child_process and node:fs calls Bun also implements.
 */
import { spawn } from "node:child_process";
import { createWriteStream, openSync } from "node:fs";
import { unavailableError } from "../probe/run-ffmpeg.ts";
import { InputDurationReader, ProgressParser, type ProgressUpdate, shouldPublish } from "./progress.ts";

/** 64 KiB: ffmpeg's error is in its last lines; the full log goes to logPath. */
export const STDERR_TAIL_CHARS = 64 * 1024;

export interface FfmpegRunOptions {
  /** Default "ffmpeg" from PATH. */
  ffmpegPath?: string;
  args: readonly string[];
  /**
   * The output's length for percent and ETA. Undefined: the input's duration, taken from the
   * "Duration:" line ffmpeg prints for its first input or from expectDuration, whichever comes first.
   */
  expectedDurationMs: number | undefined;
  /** Created or truncated before ffmpeg starts; receives all of stderr. */
  logPath: string;
  /** Throttled (see shouldPublish); the final block always arrives. Must not throw. */
  onProgress?: (update: ProgressUpdate) => void;
  /** Between SIGTERM and SIGKILL on cancel(); default 5 s. */
  killGraceMs?: number;
  progressIntervalMs?: number;
  /** Text that must not reach the log or an error (a presigned URL's query), replaced by "[redacted]". */
  redact?: readonly string[];
  now?: () => number;
}

export interface FfmpegSucceeded {
  lastProgress: ProgressUpdate | undefined;
  stderrTail: string;
  /** The log could not be written completely (disk full); the encode itself succeeded. */
  logWriteError: Error | undefined;
}

export interface RunningFfmpeg {
  readonly pid: number | undefined;
  /** Resolves on exit code 0; rejects with FfmpegFailedError, FfmpegCancelledError or FfmpegUnavailableError. */
  readonly done: Promise<FfmpegSucceeded>;
  /** SIGTERM (ffmpeg then finishes the files it has open), SIGKILL after the grace period. */
  cancel(): void;
  /** The expected duration learnt while ffmpeg runs (the input's probe); ignored once one is known. */
  expectDuration(durationMs: number): void;
}

export class FfmpegFailedError extends Error {
  override name = "FfmpegFailedError";
  constructor(
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly stderrTail: string,
  ) {
    const how = signal === null ? `exited with code ${exitCode}` : `was killed by ${signal}`;
    super(`ffmpeg ${how}: ${lastLines(stderrTail)}`);
  }
}

export class FfmpegCancelledError extends Error {
  override name = "FfmpegCancelledError";
  constructor(readonly stderrTail: string) {
    super("ffmpeg was cancelled");
  }
}

/** The last few non-empty lines, where ffmpeg says what went wrong, at most 1000 characters. */
function lastLines(text: string): string {
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const message = lines.slice(-5).join(" | ");
  return message.length > 1000 ? `…${message.slice(-999)}` : message || "(no output on stderr)";
}

export function startFfmpeg(options: FfmpegRunOptions): RunningFfmpeg {
  const now = options.now ?? Date.now;
  const killGraceMs = options.killGraceMs ?? 5_000;
  const redact = (line: string) =>
    (options.redact ?? []).reduce(
      (text, secret) => (secret ? text.replaceAll(secret, "[redacted]") : text),
      line,
    );

  // Opened synchronously so a bad log location fails before anything is encoded.
  const log = createWriteStream(options.logPath, { fd: openSync(options.logPath, "w") });
  let logWriteError: Error | undefined;
  log.on("error", (error) => {
    logWriteError ??= error;
  });

  const child = spawn(options.ffmpegPath ?? "ffmpeg", options.args, { stdio: ["ignore", "pipe", "pipe"] });
  const parser = new ProgressParser(options.expectedDurationMs);
  const inputDuration = new InputDurationReader();
  let lastProgress: ProgressUpdate | undefined;
  let lastPublishedAt: number | undefined;
  let stderrPartial = "";
  let tail = "";
  let cancelled = false;
  let exited = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;

  const keep = (text: string) => {
    if (!logWriteError) log.write(text);
    tail += text;
    // Cut at a line start, so a tail that ends up no longer than the limit still begins with a whole line.
    if (tail.length > 2 * STDERR_TAIL_CHARS) tail = trimmedTail(tail);
  };

  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    for (const update of parser.push(chunk)) {
      lastProgress = update;
      if (shouldPublish(lastPublishedAt, now(), update, options.progressIntervalMs)) {
        lastPublishedAt = now();
        options.onProgress?.(update);
      }
    }
  });
  // Redaction works on whole lines, so a secret split across two chunks is still caught.
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (stderrPartial + chunk).split("\n");
    stderrPartial = lines.pop() ?? "";
    for (const line of lines) {
      const durationMs = inputDuration.push(line);
      if (durationMs !== undefined) parser.expectDuration(durationMs);
    }
    if (lines.length > 0) keep(`${lines.map(redact).join("\n")}\n`);
  });

  const done = new Promise<FfmpegSucceeded>((resolve, reject) => {
    let settled = false;
    // Settles once the log is flushed, so the caller can upload a complete log right away.
    const settle = (outcome: (stderrTail: string) => void) => {
      if (settled) return;
      settled = true;
      exited = true;
      clearTimeout(killTimer);
      if (stderrPartial !== "") keep(redact(stderrPartial));
      const stderrTail = trimmedTail(tail);
      if (logWriteError) outcome(stderrTail);
      else log.end(() => outcome(stderrTail));
    };
    child.on("error", (error: NodeJS.ErrnoException) => {
      settle(() => reject(unavailableError(options.ffmpegPath ?? "ffmpeg", error)));
    });
    child.on("close", (exitCode, signal) => {
      settle((stderrTail) => {
        if (cancelled) reject(new FfmpegCancelledError(stderrTail));
        else if (exitCode === 0) resolve({ lastProgress, stderrTail, logWriteError });
        else reject(new FfmpegFailedError(exitCode, signal, stderrTail));
      });
    });
  });

  return {
    pid: child.pid,
    done,
    cancel() {
      if (exited || cancelled) return;
      cancelled = true;
      child.kill("SIGTERM");
      killTimer = setTimeout(() => child.kill("SIGKILL"), killGraceMs);
    },
    expectDuration(durationMs) {
      parser.expectDuration(durationMs);
    },
  };
}

/** The last STDERR_TAIL_CHARS, starting at a line boundary when it had to be cut. */
function trimmedTail(text: string): string {
  if (text.length <= STDERR_TAIL_CHARS) return text;
  const cut = text.slice(-STDERR_TAIL_CHARS);
  const newline = cut.indexOf("\n");
  return newline < 0 ? cut : cut.slice(newline + 1);
}
