/**
 * Moves a soft subtitle file onto the output timeline when segments are removed. ffmpeg
 * cannot filter subtitle streams, so trim/concat leaves a muxed subtitle track on the input's
 * times; the Worker rewrites the cue times instead. Pure text in, text out: SubRip (.srt),
 * WebVTT (.vtt) and ASS/SSA (Dialogue lines). A cue inside a removed span is dropped; a cue
 * across a cut keeps its visible parts joined; cues past the input's end are dropped.
 */
import type { RemovedSegment } from "@tjm/protocol";
import { type KeptRange, keptRanges, spanOnOutput } from "./timeline.ts";

export type SubtitleFormat = "srt" | "vtt" | "ass";

export function subtitleFormat(text: string): SubtitleFormat {
  const body = text.replace(/^\uFEFF/, "");
  if (body.startsWith("WEBVTT")) return "vtt";
  if (/^\[Script Info\]/m.test(body) || /^Dialogue:/m.test(body)) return "ass";
  return "srt";
}

export function retimeSubtitles(
  text: string,
  removed: readonly RemovedSegment[],
  durationMs: number,
): string {
  // Closed at the input's end: a cue after it would stretch the output's duration.
  const ranges = keptRanges(removed, durationMs).map((range) => ({
    ...range,
    endMs: range.endMs ?? durationMs,
  }));
  const format = subtitleFormat(text);
  return format === "ass" ? retimeAss(text, ranges) : retimeCueBlocks(text, ranges, format);
}

const CUE_TIMING = /^\s*((?:\d+:)?\d{1,2}:\d{2}[,.]\d{1,3})\s*-->\s*((?:\d+:)?\d{1,2}:\d{2}[,.]\d{1,3})(.*)$/;

function retimeCueBlocks(text: string, ranges: KeptRange[], format: "srt" | "vtt"): string {
  const bom = text.startsWith("\uFEFF") ? "\uFEFF" : "";
  const blocks = text
    .slice(bom.length)
    .replace(/\r\n?/g, "\n")
    .trimEnd()
    .split(/\n(?:[ \t]*\n)+/);
  let cueNumber = 0;
  const kept = blocks.flatMap((block) => {
    const lines = block.split("\n");
    const timingIndex = lines.findIndex((line) => CUE_TIMING.test(line));
    if (timingIndex < 0) return block.trim() === "" ? [] : [block];
    const [, start = "", end = "", settings = ""] = CUE_TIMING.exec(lines[timingIndex] ?? "") ?? [];
    const span = spanOnOutput(clockMs(start), clockMs(end), ranges);
    if (span === undefined) return [];
    lines[timingIndex] = `${clock(span.startMs, format)} --> ${clock(span.endMs, format)}${settings}`;
    if (format === "srt") {
      cueNumber += 1;
      // SubRip numbers its cues from 1 without gaps; the number sits above the timing line.
      if (timingIndex > 0 && /^\d+$/.test(lines[timingIndex - 1]?.trim() ?? "")) {
        lines[timingIndex - 1] = String(cueNumber);
      }
    }
    return [lines.join("\n")];
  });
  return `${bom}${kept.join("\n\n")}\n`;
}

const ASS_DIALOGUE = /^(Dialogue:\s*[^,]*,)(\d+:\d{2}:\d{2}\.\d{2}),(\d+:\d{2}:\d{2}\.\d{2}),(.*)$/;

function retimeAss(text: string, ranges: KeptRange[]): string {
  const newline = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text.split(/\r?\n/).flatMap((line) => {
    const dialogue = ASS_DIALOGUE.exec(line);
    if (!dialogue) return [line];
    const [, head = "", start = "", end = "", rest = ""] = dialogue;
    const span = spanOnOutput(clockMs(start), clockMs(end), ranges);
    if (span === undefined) return [];
    return [`${head}${clock(span.startMs, "ass")},${clock(span.endMs, "ass")},${rest}`];
  });
  return lines.join(newline);
}

/** "01:02:03,450", "02:03.450" (WebVTT may omit hours), "1:02:03.45" (ASS centiseconds) -> ms. */
function clockMs(value: string): number {
  const [clockPart = "", fraction = "0"] = value.split(/[,.]/);
  const parts = clockPart.split(":").map(Number);
  const secondsTotal = parts.reduce((total, part) => total * 60 + part, 0);
  return secondsTotal * 1000 + Math.round(Number(`0.${fraction}`) * 1000);
}

function clock(ms: number, format: SubtitleFormat): string {
  const total = Math.max(0, Math.round(ms));
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor(total / 60_000) % 60;
  const secs = Math.floor(total / 1000) % 60;
  const two = (n: number) => String(n).padStart(2, "0");
  if (format === "ass") {
    const centis = Math.floor((total % 1000) / 10);
    return `${hours}:${two(minutes)}:${two(secs)}.${two(centis)}`;
  }
  const millis = String(total % 1000).padStart(3, "0");
  return `${two(hours)}:${two(minutes)}:${two(secs)}${format === "srt" ? "," : "."}${millis}`;
}
