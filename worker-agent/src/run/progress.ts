/**
 * ffmpeg's `-progress pipe:1` output: blocks of key=value lines, each ended by
 * `progress=continue` (one every 0.5 s by default) or `progress=end` (the last). No I/O:
 * ProgressParser takes stdout chunks as they come and returns the finished blocks.
 *
 * What ffmpeg 5.1 prints, as seen in fixtures/: `frame` and `fps` only when an output has
 * video; `bitrate=  65.0kbits/s`, `speed=0.765x` with padding spaces, `N/A` before the first
 * packet; `out_time_us` in microseconds (and `out_time_ms`, which despite its name is also
 * microseconds); `out_time` negative while the first timestamps are below zero.
 */
import { messageLimits } from "@tjm/protocol";

export interface ProgressUpdate {
  /** 0..100, from outTimeMs against the expected output duration (0 while that is unknown). */
  percent: number;
  fps: number | null;
  bitrateKbps: number | null;
  /** Encoded media seconds per wall-clock second. */
  speed: number | null;
  etaSeconds: number | null;
  outTimeMs: number;
  /** Frames encoded so far in this run (ffmpeg's `frame`); absent when it printed none (no video). */
  frames?: number;
  /** This was the `progress=end` block: ffmpeg has stopped (it prints one on failure too). */
  final: boolean;
}

/**
 * The figures of one block; fields ffmpeg did not print or printed as N/A become null. Without
 * an expected duration (not known yet) percent is 0 and the ETA null.
 */
export function progressFromBlock(
  fields: ReadonlyMap<string, string>,
  expectedDurationMs: number | undefined,
  previousOutTimeMs = 0,
): ProgressUpdate {
  const outTimeMs = outTime(fields) ?? previousOutTimeMs;
  const speed = bounded(numberIn(fields.get("speed")), messageLimits.speedMax);
  const final = fields.get("progress") === "end";
  const frames = numberIn(fields.get("frame"));
  const known = expectedDurationMs !== undefined && expectedDurationMs > 0;
  const remainingMs = known ? Math.max(0, expectedDurationMs - outTimeMs) : undefined;
  return {
    percent: known ? clamp((outTimeMs / expectedDurationMs) * 100, 0, 100) : 0,
    fps: bounded(numberIn(fields.get("fps")), messageLimits.fpsMax),
    bitrateKbps: bounded(numberIn(fields.get("bitrate")), messageLimits.bitrateKbpsMax),
    speed,
    etaSeconds: final
      ? 0
      : remainingMs !== undefined && speed !== null && speed > 0
        ? bounded(remainingMs / 1000 / speed, maxEtaSeconds)
        : null,
    outTimeMs,
    ...(frames === null ? {} : { frames: Math.max(0, Math.floor(frames)) }),
    final,
  };
}

const maxEtaSeconds = messageLimits.durationMsMax / 1000;

/** Microseconds from out_time_us, else out_time "HH:MM:SS.micro"; negative counts as zero. */
function outTime(fields: ReadonlyMap<string, string>): number | undefined {
  const micros = fields.get("out_time_us")?.trim();
  if (micros !== undefined && /^-?\d+$/.test(micros)) {
    return clamp(Math.floor(Number(micros) / 1000), 0, messageLimits.durationMsMax);
  }
  const clock = /^(-)?(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(fields.get("out_time")?.trim() ?? "");
  if (!clock) return undefined;
  const [, negative, hours, minutes, secs] = clock;
  const ms = Math.floor((Number(hours) * 3600 + Number(minutes) * 60 + Number(secs)) * 1000);
  return negative ? 0 : Math.min(ms, messageLimits.durationMsMax);
}

/** The leading number of "  65.0kbits/s", "0.765x", "25.60"; null for N/A or nothing. */
function numberIn(value: string | undefined): number | null {
  const match = /^\s*(-?\d+(?:\.\d+)?)/.exec(value ?? "");
  return match ? Number(match[1]) : null;
}

/** Clamped into [0, max] so the figure always fits the protocol's Progress message. */
function bounded(value: number | null, max: number): number | null {
  return value === null ? null : clamp(value, 0, max);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/**
 * Feed stdout chunks in any split; get one update per completed block. The expected duration
 * may come later (expectDuration): ffmpeg starts before the input's probe has answered.
 */
export class ProgressParser {
  private partial = "";
  private fields = new Map<string, string>();
  private outTimeMs = 0;

  constructor(private expectedDurationMs: number | undefined) {}

  /** The output's expected length, once known; the first one given stays. */
  expectDuration(durationMs: number): void {
    if (this.expectedDurationMs === undefined && durationMs > 0) this.expectedDurationMs = durationMs;
  }

  push(chunk: string): ProgressUpdate[] {
    const lines = (this.partial + chunk).split("\n");
    this.partial = lines.pop() ?? "";
    const updates: ProgressUpdate[] = [];
    for (const raw of lines) {
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      const equals = line.indexOf("=");
      if (equals <= 0) continue;
      const key = line.slice(0, equals).trim();
      this.fields.set(key, line.slice(equals + 1).trim());
      if (key !== "progress") continue;
      const update = progressFromBlock(this.fields, this.expectedDurationMs, this.outTimeMs);
      this.outTimeMs = update.outTimeMs;
      this.fields = new Map();
      updates.push(update);
    }
    return updates;
  }
}

/** 500 ms: the brief's "at most 2 per second" for progress messages to the Manager. */
export const PROGRESS_MIN_INTERVAL_MS = 500;

/**
 * Whether to publish an update now, given when the last one went out (undefined: none yet).
 * The final block always goes out, so the last figure the Manager sees is ffmpeg's last.
 */
export function shouldPublish(
  lastPublishedAtMs: number | undefined,
  nowMs: number,
  update: Pick<ProgressUpdate, "final">,
  minIntervalMs = PROGRESS_MIN_INTERVAL_MS,
): boolean {
  return update.final || lastPublishedAtMs === undefined || nowMs - lastPublishedAtMs >= minIntervalMs;
}

/**
 * The duration ffmpeg prints for its first input ("Input #0, …" then "  Duration: 00:01:00.02,
 * start: …"), fed stderr lines in order; undefined for every other line and for "N/A". The
 * other inputs (watermark, subtitle files) print theirs after "Input #1".
 */
export class InputDurationReader {
  private inFirstInput = false;
  private found = false;

  push(line: string): number | undefined {
    if (this.found) return undefined;
    if (line.startsWith("Input #")) this.inFirstInput = line.startsWith("Input #0,");
    else if (/^(Output #|Stream mapping:)/.test(line)) this.inFirstInput = false;
    if (!this.inFirstInput) return undefined;
    const clock = /^\s+Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(line);
    if (!clock) return undefined;
    this.found = true;
    const [, hours, minutes, secs] = clock;
    const ms = Math.round((Number(hours) * 3600 + Number(minutes) * 60 + Number(secs)) * 1000);
    return ms > 0 ? ms : undefined;
  }
}
