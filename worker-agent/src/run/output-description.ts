/**
 * What the completion report says of each output (its duration, codecs and picture size):
 * read in this process from an MP4 or MOV's `moov` (iso-media.ts), or from ffprobe for every
 * other container and for any MP4 or MOV that reader leaves alone.
 */
import type { OutputResult, PlanOutput } from "@tjm/protocol";
import { describeIsoMediaFile } from "./iso-media.ts";
import { type MediaInfo, type ProbeOptions, probeMedia } from "./media-info.ts";

export type OutputDescription = Pick<OutputResult, "durationMs" | "codecs" | "widthPx" | "heightPx">;

/** ffprobe's facts as the report states them: video first, then audio, then subtitles. */
export function describeProbed(info: MediaInfo): OutputDescription {
  return {
    durationMs: info.durationMs,
    codecs: [
      ...(info.video ? [info.video.codec] : []),
      ...info.audioStreams.map((stream) => stream.codec),
      ...info.subtitleStreams.map((stream) => stream.codec),
    ],
    ...(info.video ? { widthPx: info.video.width, heightPx: info.video.height } : {}),
  };
}

export async function describeOutput(
  path: string,
  container: PlanOutput["container"] | undefined,
  options: ProbeOptions = {},
): Promise<OutputDescription> {
  if (container === "mp4" || container === "mov") {
    const read = await describeIsoMediaFile(path);
    if (read) return read;
  }
  return describeProbed(await probeMedia(path, options));
}
