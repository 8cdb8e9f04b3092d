/**
 * What the input holds, from `ffprobe -show_format -show_streams` JSON: the pure parser
 * (parseProbeJson) and the thin runner (probeMedia). An input ffprobe cannot read becomes
 * InputUnreadableError, which the Worker reports as the INPUT_UNREADABLE failure.
 */
import { runFfmpeg } from "../probe/run-ffmpeg.ts";

/** The stream ffmpeg encodes as `0:V:0`: the first video stream that is not cover art. */
export interface VideoStreamInfo {
  codec: string;
  /** As displayed: a stream rotated by ±90° reports its height as width, as ffmpeg autorotates. */
  width: number;
  height: number;
}

export interface AudioStreamInfo {
  codec: string;
  bitRateBps?: number;
  channels: number;
  sampleRateHz?: number;
  language?: string;
}

export interface SubtitleStreamInfo {
  codec: string;
  language?: string;
}

export interface MediaInfo {
  /** ffprobe's format_name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm". */
  formatName: string;
  durationMs: number;
  video?: VideoStreamInfo;
  /** In input order: entry N is `0:a:N`. */
  audioStreams: AudioStreamInfo[];
  subtitleStreams: SubtitleStreamInfo[];
}

export const INPUT_UNREADABLE = "INPUT_UNREADABLE";

export class InputUnreadableError extends Error {
  override name = "InputUnreadableError";
  readonly failureCode = INPUT_UNREADABLE;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  channels?: number;
  sample_rate?: string;
  bit_rate?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { side_data_type?: string; rotation?: number }[];
}

interface ProbeOutput {
  format?: { format_name?: string; duration?: string };
  streams?: ProbeStream[];
}

/** Reads ffprobe's JSON; throws InputUnreadableError when it describes nothing encodable. */
export function parseProbeJson(json: string): MediaInfo {
  let probe: ProbeOutput;
  try {
    probe = JSON.parse(json) as ProbeOutput;
  } catch {
    throw new InputUnreadableError("ffprobe printed no JSON description of the input");
  }
  if (typeof probe !== "object" || probe === null || probe.format === undefined) {
    throw new InputUnreadableError("ffprobe found no media container in the input");
  }
  const streams = Array.isArray(probe.streams) ? probe.streams : [];
  // What `0:V:0` names; one without a size is no picture ffmpeg could encode.
  const first = streams.find(
    (stream) => stream.codec_type === "video" && stream.disposition?.attached_pic !== 1,
  );
  const picture = first && positive(first.width) && positive(first.height) ? first : undefined;
  const audioStreams = streams
    .filter((stream) => stream.codec_type === "audio")
    .map((stream) => ({
      codec: stream.codec_name ?? "unknown",
      ...optional("bitRateBps", number(stream.bit_rate)),
      channels: stream.channels ?? 0,
      ...optional("sampleRateHz", number(stream.sample_rate)),
      ...optional("language", language(stream)),
    }));
  if (picture === undefined && audioStreams.length === 0) {
    throw new InputUnreadableError("the input has no video or audio stream");
  }
  const durationMs = seconds(probe.format.duration) ?? longestStream(streams);
  if (durationMs === undefined) throw new InputUnreadableError("ffprobe cannot tell the input's duration");
  return {
    formatName: probe.format.format_name ?? "unknown",
    durationMs,
    ...(picture === undefined ? {} : { video: videoInfo(picture) }),
    audioStreams,
    subtitleStreams: streams
      .filter((stream) => stream.codec_type === "subtitle")
      .map((stream) => ({
        codec: stream.codec_name ?? "unknown",
        ...optional("language", language(stream)),
      })),
  };
}

function videoInfo(stream: ProbeStream): VideoStreamInfo {
  const width = stream.width ?? 0;
  const height = stream.height ?? 0;
  const quarterTurn = Math.abs(rotation(stream)) % 180 === 90;
  return {
    codec: stream.codec_name ?? "unknown",
    width: quarterTurn ? height : width,
    height: quarterTurn ? width : height,
  };
}

/** ffprobe ≥ 5 reports a display matrix as side data; older muxers left a "rotate" tag. */
function rotation(stream: ProbeStream): number {
  const matrix = stream.side_data_list?.find((data) => typeof data.rotation === "number");
  return matrix?.rotation ?? number(stream.tags?.rotate) ?? 0;
}

function language(stream: ProbeStream): string | undefined {
  const value = stream.tags?.language;
  return value === undefined || value === "" || value === "und" ? undefined : value;
}

function longestStream(streams: ProbeStream[]): number | undefined {
  const durations = streams.map((stream) => seconds(stream.duration)).filter((ms) => ms !== undefined);
  return durations.length === 0 ? undefined : Math.max(...durations);
}

function seconds(value: string | undefined): number | undefined {
  const parsed = number(value);
  return parsed === undefined || parsed <= 0 ? undefined : Math.round(parsed * 1000);
}

function number(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

const positive = (value: number | undefined) => value !== undefined && value > 0;

/** Keeps absent values absent instead of present-and-undefined, so results compare cleanly. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export interface ProbeOptions {
  ffprobePath?: string;
  /** 30 s: a local file probes in milliseconds; a URL may need a few round trips. */
  timeoutMs?: number;
}

export function probeArgs(pathOrUrl: string): string[] {
  return ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", "--", pathOrUrl];
}

/**
 * A presigned URL's query string is a credential: error text that quotes the location keeps
 * only the part before "?".
 */
export function redactLocation(text: string, location: string): string {
  const query = location.indexOf("?");
  return query < 0 ? text : text.replaceAll(location, `${location.slice(0, query)}?[redacted]`);
}

/**
 * Runs ffprobe on a local path or URL. ffprobe's own error line ("Invalid data found when
 * processing input", "No such file or directory") becomes the InputUnreadableError message.
 */
export async function probeMedia(pathOrUrl: string, options: ProbeOptions = {}): Promise<MediaInfo> {
  const ffprobePath = options.ffprobePath ?? "ffprobe";
  const timeoutMs = options.timeoutMs ?? 30_000;
  const run = await runFfmpeg(ffprobePath, probeArgs(pathOrUrl), timeoutMs, {
    tool: "ffprobe",
    envVar: "FFPROBE_PATH",
  });
  if (run.timedOut) {
    throw new InputUnreadableError(`ffprobe did not finish reading the input within ${timeoutMs} ms`);
  }
  if (run.exitCode !== 0) {
    const reason = redactLocation(run.stderr.trim().split("\n").at(-1) ?? "", pathOrUrl);
    throw new InputUnreadableError(`ffprobe cannot read the input (exit ${run.exitCode}): ${reason}`);
  }
  return parseProbeJson(run.stdout);
}
