/**
 * Parsers of what `ffmpeg -hide_banner -version | -encoders | -decoders | -filters | -hwaccels`
 * print, and of the stderr of a failed encode. No I/O: the probe runs ffmpeg, these read the
 * text. Each parser throws when the text is not the listing it expects, so a wrapper script
 * or a changed ffmpeg is reported instead of being read as "no capabilities".
 */

export interface FfmpegVersion {
  /** As ffmpeg prints it: "5.1.9-0+deb12u1", "n7.1", "N-113000-g1234abcd". */
  version: string;
  /** The `./configure` arguments the build was made with, one per entry, quotes removed. */
  configuration: string[];
}

export type CodecType = "video" | "audio" | "subtitle";

export interface CodecEntry {
  name: string;
  type: CodecType;
  description: string;
}

/**
 * video / audio: every pad of the filter carries that medium; audio-video: it converts or
 * mixes both (showwaves, ebur128); dynamic: its pads are decided by its options (concat, split).
 */
export type FilterType = "video" | "audio" | "audio-video" | "dynamic";

export interface FilterEntry {
  name: string;
  type: FilterType;
  /** ffmpeg's pad signature: one letter per pad (A audio, V video), N dynamic, | none (source or sink). */
  inputs: string;
  outputs: string;
  description: string;
}

export function parseVersion(text: string): FfmpegVersion {
  const lines = text.split("\n");
  const version = /^ffmpeg version (\S+)/.exec(lines[0] ?? "")?.[1];
  if (version === undefined) {
    throw new Error(`not the output of ffmpeg -version: first line is "${lines[0] ?? ""}"`);
  }
  const configurationLine = lines.find((line) => line.startsWith("configuration:"));
  const configuration =
    configurationLine === undefined ? [] : shellWords(configurationLine.slice("configuration:".length));
  return { version, configuration };
}

/**
 * configure records its arguments with quotes_if_needed: an argument holding a space is
 * wrapped in single quotes ('--extra-cflags=-O3 -march=native'), so words split on blanks
 * outside quotes.
 */
function shellWords(text: string): string[] {
  return [...text.matchAll(/(?:[^\s']+|'[^']*')+/g)].map(([word]) => word.replaceAll("'", ""));
}

const CODEC_TYPES = { V: "video", A: "audio", S: "subtitle" } as const satisfies Record<string, CodecType>;

/** A row such as " V....D libx264              libx264 H.264 / AVC ... (codec h264)". */
const CODEC_ROW = /^ ([VAS])[.A-Z]{5} (\S+) +(.*)$/;

/** `ffmpeg -encoders` or `-decoders`: the legend ends at the " ------" line, the rows follow. */
export function parseCodecList(text: string, heading: "Encoders" | "Decoders"): CodecEntry[] {
  const lines = text.split("\n");
  const separator = lines.findIndex((line) => line.trim() === "------");
  if (!lines[0]?.startsWith(`${heading}:`) || separator === -1) {
    throw new Error(`not the output of ffmpeg -${heading.toLowerCase()}: first line is "${lines[0] ?? ""}"`);
  }
  return lines.slice(separator + 1).flatMap((line) => {
    const row = CODEC_ROW.exec(line);
    if (row === null) return [];
    const [, letter, name = "", description = ""] = row;
    return [{ name, type: CODEC_TYPES[letter as keyof typeof CODEC_TYPES], description: description.trim() }];
  });
}

/**
 * A row such as " T.C scale             V->V       Scale the input video size". The pad
 * signature (X->Y) is what tells a row from the legend above it, which has the same flags.
 */
const FILTER_ROW = /^ [T.][S.][C.] (\S+) +([AVN|]+)->([AVN|]+) +(.*)$/;

export function parseFilters(text: string): FilterEntry[] {
  const lines = text.split("\n");
  if (!lines[0]?.startsWith("Filters:")) {
    throw new Error(`not the output of ffmpeg -filters: first line is "${lines[0] ?? ""}"`);
  }
  return lines.flatMap((line) => {
    const row = FILTER_ROW.exec(line);
    if (row === null) return [];
    const [, name = "", inputs = "", outputs = "", description = ""] = row;
    return [{ name, type: filterType(inputs + outputs), inputs, outputs, description: description.trim() }];
  });
}

function filterType(pads: string): FilterType {
  const audio = pads.includes("A");
  const video = pads.includes("V");
  if (audio && video) return "audio-video";
  if (audio) return "audio";
  if (video) return "video";
  return "dynamic";
}

/** `ffmpeg -hwaccels`: one method per line under the heading, then a blank line. */
export function parseHwaccels(text: string): string[] {
  const [heading, ...rest] = text.split("\n");
  if (heading?.trim() !== "Hardware acceleration methods:") {
    throw new Error(`not the output of ffmpeg -hwaccels: first line is "${heading ?? ""}"`);
  }
  return rest.map((line) => line.trim()).filter((line) => line !== "");
}

/**
 * "[h264_nvenc @ 0x557332c36500] Cannot load libcuda.so.1" -> context and message; also
 * "[h264_nvenc] …", as a log transcribed without the context's address has it.
 */
export const CONTEXT_LINE = /^\[([^\]@]+?)(?: @ 0x[0-9a-f]+)?\] (.*)$/;

/**
 * The line of an encode's stderr (logged at `-v error`) that says why it failed.
 * ffmpeg logs the component that failed with its context first and then its own summary
 * ("Error initializing output stream ...", "Conversion failed!"), which is the same for
 * every cause. So: the encoder's own last message; else the last message of a library
 * component (AVHWDeviceContext when a device cannot be opened); ffmpeg 6.1+ also tags its
 * per-stream and per-file summaries ("[vost#0:0/h264_nvenc @ ...]", "[out#0/null @ ...]"),
 * and those names contain '#', so they are skipped; else the last line. `isChatter` names
 * messages a more verbose log adds on every run, which are never the reason.
 */
export function failureReason(
  stderr: string,
  encoder: string,
  isChatter: (message: string) => boolean = () => false,
): string | undefined {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const messages = lines.flatMap((line) => {
    const match = CONTEXT_LINE.exec(line);
    if (match === null || isChatter(match[2] ?? "")) return [];
    return [{ context: match[1] ?? "", message: match[2] ?? "" }];
  });
  return (
    messages.findLast(({ context }) => context === encoder)?.message ??
    messages.findLast(({ context }) => !context.includes("#"))?.message ??
    lines.at(-1)
  );
}
