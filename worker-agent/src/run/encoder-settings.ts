/**
 * Per-encoder ffmpeg options: the portable preset mapped to each encoder family's own
 * speed/quality names, a constant-quality default (the plan asks for no video bitrate), and
 * the pixel format the filter graph hands the encoder. Which encoder a pool uses for a codec
 * comes from @tjm/protocol's VIDEO_ENCODERS, never from here.
 *
 * | portable | libx264/libx265 | libsvtav1 | libvpx-vp9 (-deadline/-cpu-used) | *_nvenc | *_qsv    | *_amf    |
 * |----------|-----------------|-----------|----------------------------------|---------|----------|----------|
 * | fastest  | ultrafast       | 12        | realtime / 8                     | p1      | veryfast | speed    |
 * | fast     | veryfast        | 10        | good / 5                         | p3      | faster   | speed    |
 * | medium   | medium          | 8         | good / 2                         | p4      | medium   | balanced |
 * | slow     | slow            | 6         | good / 1                         | p6      | slow     | quality  |
 * | slowest  | veryslow        | 4         | good / 0                         | p7      | veryslow | quality  |
 *
 * Why these: x264/x265 "medium" is the encoders' own default and "placebo" buys nothing over
 * "veryslow". SVT-AV1 runs 0..13; 13 is a debugging speed and 0..3 are research-grade slow
 * (hours per minute of 1080p), so the usable span is 12..4. libvpx's "realtime" deadline is
 * the only mode where cpu-used 8 is allowed and is the fast live-encoding path; under "good"
 * cpu-used 0..5 trades speed for quality ("best" is documented as not worth its time over
 * good/0). NVENC p1..p7 is its own fastest..slowest scale with p4 as default. QSV and AMF
 * have fewer steps, so neighbours share one.
 *
 * Hardware families are golden-tested only: this machine has no GPU (the tests allow a
 * fake only at that boundary), and the probe's self-test proves each encoder on a real host.
 */
import type { VideoPreset } from "@tjm/protocol";

export type EncoderFamily = "x264" | "x265" | "svtav1" | "vpx-vp9" | "nvenc" | "qsv" | "amf";

export function encoderFamily(encoder: string): EncoderFamily {
  if (encoder === "libx264") return "x264";
  if (encoder === "libx265") return "x265";
  if (encoder === "libsvtav1") return "svtav1";
  if (encoder === "libvpx-vp9") return "vpx-vp9";
  if (encoder.endsWith("_nvenc")) return "nvenc";
  if (encoder.endsWith("_qsv")) return "qsv";
  if (encoder.endsWith("_amf")) return "amf";
  throw new Error(`no preset mapping for encoder ${encoder}`);
}

type PresetTable = Record<VideoPreset, readonly string[]>;

/** A family whose presets set one option, to these values from fastest to slowest. */
function presetScale(
  option: string,
  [fastest, fast, medium, slow, slowest]: readonly [string, string, string, string, string],
): PresetTable {
  return {
    fastest: [option, fastest],
    fast: [option, fast],
    medium: [option, medium],
    slow: [option, slow],
    slowest: [option, slowest],
  };
}

const x26x = presetScale("-preset", ["ultrafast", "veryfast", "medium", "slow", "veryslow"]);

export const PRESET_OPTIONS: Record<EncoderFamily, PresetTable> = {
  x264: x26x,
  x265: x26x,
  svtav1: presetScale("-preset", ["12", "10", "8", "6", "4"]),
  "vpx-vp9": {
    fastest: ["-deadline", "realtime", "-cpu-used", "8"],
    fast: ["-deadline", "good", "-cpu-used", "5"],
    medium: ["-deadline", "good", "-cpu-used", "2"],
    slow: ["-deadline", "good", "-cpu-used", "1"],
    slowest: ["-deadline", "good", "-cpu-used", "0"],
  },
  nvenc: presetScale("-preset", ["p1", "p3", "p4", "p6", "p7"]),
  qsv: presetScale("-preset", ["veryfast", "faster", "medium", "slow", "veryslow"]),
  amf: presetScale("-quality", ["speed", "speed", "balanced", "quality", "quality"]),
};

/**
 * Constant quality at each family's customary "good, not wasteful" point. libvpx-vp9 needs
 * `-b:v 0` or it caps the stream at its default 256 kb/s target; row-mt lets it use both
 * cores. NVENC's `-cq` only applies in VBR mode with no bitrate cap.
 */
export const QUALITY_OPTIONS: Record<EncoderFamily, readonly string[]> = {
  x264: ["-crf", "23"],
  x265: ["-crf", "28"],
  svtav1: ["-crf", "35"],
  "vpx-vp9": ["-crf", "32", "-b:v", "0", "-row-mt", "1"],
  nvenc: ["-rc", "vbr", "-cq", "23", "-b:v", "0"],
  qsv: ["-global_quality", "23"],
  amf: ["-rc", "cqp", "-qp_i", "23", "-qp_p", "23"],
};

/**
 * 8-bit 4:2:0, which every player decodes (an yuv444 or 10-bit source would otherwise give
 * High 4:4:4 H.264 that browsers refuse); QSV encoders take system-memory frames only as nv12.
 * Keeping HDR/10-bit would need a plan field, which the plan does not have.
 */
export function encoderPixelFormat(family: EncoderFamily): string {
  return family === "qsv" ? "nv12" : "yuv420p";
}

export function videoEncoderOptions(encoder: string, preset: VideoPreset): string[] {
  const family = encoderFamily(encoder);
  return ["-c:v", encoder, ...PRESET_OPTIONS[family][preset], ...QUALITY_OPTIONS[family]];
}
