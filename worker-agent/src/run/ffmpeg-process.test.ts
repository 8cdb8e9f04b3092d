import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FfmpegUnavailableError } from "../probe/run-ffmpeg.ts";
import {
  FfmpegCancelledError,
  FfmpegFailedError,
  type FfmpegRunOptions,
  STDERR_TAIL_CHARS,
  startFfmpeg,
} from "./ffmpeg-process.ts";
import type { ProgressUpdate } from "./progress.ts";

/** Real ffmpeg from PATH; the encodes are tiny lavfi sources so the file stays fast on 2 cores. */
const PROGRESS_HEAD = ["-hide_banner", "-nostdin", "-nostats", "-progress", "pipe:1", "-y"];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tjm-ffmpeg-process-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const logPath = (name: string) => join(dir, `${name}.log`);
const run = (name: string, options: Omit<FfmpegRunOptions, "logPath">) =>
  startFfmpeg({ ...options, logPath: logPath(name) });

/** A script standing in for ffmpeg where the test needs behaviour ffmpeg will not show on demand. */
function script(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe("startFfmpeg with real ffmpeg", () => {
  it("reports throttled progress ending with the final block, and logs the whole stderr", async () => {
    const updates: { at: number; update: ProgressUpdate }[] = [];
    const running = run("progress", {
      args: [
        ...PROGRESS_HEAD,
        ...["-re", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2"],
        ...["-c:v", "libx264", "-preset", "ultrafast", "-f", "null", "-"],
      ],
      expectedDurationMs: 2_000,
      onProgress: (update) => updates.push({ at: Date.now(), update }),
    });
    expect(running.pid).toBeGreaterThan(0);
    const result = await running.done;

    expect(updates.length).toBeGreaterThanOrEqual(3);
    const gaps = updates.slice(1, -1).map((entry, i) => entry.at - (updates[i]?.at ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(450);
    const last = updates.at(-1)?.update;
    expect(last).toMatchObject({ final: true, etaSeconds: 0 });
    expect(last?.percent).toBeGreaterThan(95);
    expect(result.lastProgress).toEqual(last);
    expect(result.logWriteError).toBeUndefined();
    const log = readFileSync(logPath("progress"), "utf8");
    expect(log).toContain("Output #0, null");
    expect(log).toBe(result.stderrTail);
  });

  it("a non-zero exit rejects with ffmpeg's reason and the stderr tail; the log has it too", async () => {
    const missing = join(dir, "missing.mp4");
    const error = await run("missing", {
      args: [...PROGRESS_HEAD, "-i", missing, "-f", "null", "-"],
      expectedDurationMs: 1,
    }).done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FfmpegFailedError);
    expect(error).toMatchObject({ exitCode: 1, signal: null });
    expect((error as Error).message).toMatch(/^ffmpeg exited with code 1: .*No such file or directory/);
    expect((error as FfmpegFailedError).stderrTail).toContain(`${missing}: No such file or directory`);
    expect(readFileSync(logPath("missing"), "utf8")).toContain("No such file or directory");
  });

  it("cancel() stops a running encode with SIGTERM and ffmpeg closes its output file", async () => {
    const output = join(dir, "cancelled.mkv");
    let cancelAt = 0;
    const running = run("cancel", {
      args: [
        ...PROGRESS_HEAD,
        ...["-re", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=30"],
        ...["-c:v", "libx264", "-preset", "ultrafast", "-f", "matroska", output],
      ],
      expectedDurationMs: 30_000,
      onProgress: () => {
        if (cancelAt === 0) {
          cancelAt = Date.now();
          running.cancel();
          running.cancel(); // idempotent
        }
      },
    });
    const error = await running.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FfmpegCancelledError);
    expect(Date.now() - cancelAt).toBeLessThan(3_000);
    expect((error as FfmpegCancelledError).stderrTail).toMatch(/Exiting normally, received signal 15/);
    expect(existsSync(output)).toBe(true);
    running.cancel(); // after exit: nothing to do
  });

  it("cancel() sends SIGKILL when the process ignores SIGTERM for the grace period", async () => {
    const stubborn = script("stubborn", "trap '' TERM\necho started >&2\nexec sleep 30");
    const running = run("stubborn", {
      ffmpegPath: stubborn,
      args: [],
      expectedDurationMs: 1,
      killGraceMs: 300,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    running.cancel();
    await expect(running.done).rejects.toBeInstanceOf(FfmpegCancelledError);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(3_000);
  });

  it("a process killed by a signal it did not get from us is a failure naming the signal", async () => {
    const suicidal = script("suicidal", "echo about to die >&2\nkill -KILL $$");
    const error = await run("suicidal", { ffmpegPath: suicidal, args: [], expectedDurationMs: 1 }).done.catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: "FfmpegFailedError", exitCode: null, signal: "SIGKILL" });
    expect((error as Error).message).toBe("ffmpeg was killed by SIGKILL: about to die");
  });

  it("keeps the last 64 KiB of stderr from a line start, and redacts secrets in the tail and the log", async () => {
    const noisy = script(
      "noisy",
      // The padding is made once: 3,000 subshells took over 30 s on a loaded 2-core machine.
      'pad=$(printf %040d 0)\ni=0\nwhile [ $i -lt 3000 ]; do\n  echo "line $i https://s3.example/in.mp4?X-Amz-Signature=SECRET $pad" >&2\n  i=$((i+1))\ndone\nexit 3',
    );
    const error = (await run("noisy", {
      ffmpegPath: noisy,
      args: [],
      expectedDurationMs: 1,
      redact: ["X-Amz-Signature=SECRET"],
    }).done.catch((e: unknown) => e)) as FfmpegFailedError;
    expect(error.exitCode).toBe(3);
    expect(error.stderrTail.length).toBeLessThanOrEqual(STDERR_TAIL_CHARS);
    expect(error.stderrTail.length).toBeGreaterThan(STDERR_TAIL_CHARS - 200);
    expect(error.stderrTail).toMatch(/^line \d+ /);
    expect(error.stderrTail).toMatch(/line 2999 .*\n$/);
    expect(error.stderrTail).not.toContain("SECRET");
    const log = readFileSync(logPath("noisy"), "utf8");
    expect(log.split("\n")).toHaveLength(3001);
    expect(log).not.toContain("SECRET");
    expect(log).toContain("https://s3.example/in.mp4?[redacted] ");
  });

  it("no executable at ffmpegPath is FfmpegUnavailableError", async () => {
    await expect(
      run("absent", { ffmpegPath: join(dir, "no-ffmpeg"), args: [], expectedDurationMs: 1 }).done,
    ).rejects.toBeInstanceOf(FfmpegUnavailableError);
  });

  it("a log path that cannot be created throws before ffmpeg starts", () => {
    expect(() =>
      startFfmpeg({ args: ["-version"], expectedDurationMs: 1, logPath: join(dir, "no-such-dir", "x.log") }),
    ).toThrow(/ENOENT/);
  });
});
