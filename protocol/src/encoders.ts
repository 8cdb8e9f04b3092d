/**
 * Which ffmpeg encoder produces each portable codec on each pool. The Manager schedules a job
 * only on a Worker whose probe lists the encoders its outputs need; the Worker builds its
 * ffmpeg arguments from the same table, so the two cannot disagree.
 */
import type { WorkerPool } from "./pools.ts";

export const PORTABLE_VIDEO_CODECS = ["h264", "hevc", "av1", "vp9"] as const;
export type PortableVideoCodec = (typeof PORTABLE_VIDEO_CODECS)[number];
export const PORTABLE_AUDIO_CODECS = ["aac", "opus", "mp3"] as const;
export type PortableAudioCodec = (typeof PORTABLE_AUDIO_CODECS)[number];

/**
 * VP9 has no NVENC or AMF encoder: NVIDIA and AMD hosts encode it in software (libvpx-vp9),
 * which every Debian or static ffmpeg build has; Intel's QSV has vp9_qsv.
 */
export const VIDEO_ENCODERS: Record<WorkerPool, Record<PortableVideoCodec, string>> = {
  cpu: { h264: "libx264", hevc: "libx265", av1: "libsvtav1", vp9: "libvpx-vp9" },
  nvidia: { h264: "h264_nvenc", hevc: "hevc_nvenc", av1: "av1_nvenc", vp9: "libvpx-vp9" },
  intel: { h264: "h264_qsv", hevc: "hevc_qsv", av1: "av1_qsv", vp9: "vp9_qsv" },
  amd: { h264: "h264_amf", hevc: "hevc_amf", av1: "av1_amf", vp9: "libvpx-vp9" },
};

export const AUDIO_ENCODERS: Record<PortableAudioCodec, string> = {
  aac: "aac",
  opus: "libopus",
  mp3: "libmp3lame",
};

/** The encoders a plan's outputs need on `pool`, sorted and without repeats. */
export function encodersNeeded(
  pool: WorkerPool,
  outputs: readonly { video?: { codec: string } | undefined; audio?: { codec: string } | undefined }[],
): string[] {
  const needed = new Set<string>();
  for (const output of outputs) {
    const video = output.video?.codec as PortableVideoCodec | undefined;
    const audio = output.audio?.codec as PortableAudioCodec | undefined;
    if (video && video in VIDEO_ENCODERS[pool]) needed.add(VIDEO_ENCODERS[pool][video]);
    if (audio && audio in AUDIO_ENCODERS) needed.add(AUDIO_ENCODERS[audio]);
  }
  return [...needed].sort();
}
