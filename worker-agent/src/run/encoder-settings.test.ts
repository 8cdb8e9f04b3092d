import type { VideoPreset } from "@tjm/protocol";
import { VIDEO_ENCODERS, WORKER_POOLS } from "@tjm/protocol";
import { describe, expect, it } from "vitest";
import { encoderFamily, encoderPixelFormat, videoEncoderOptions } from "./encoder-settings.ts";

const PRESETS: VideoPreset[] = ["fastest", "fast", "medium", "slow", "slowest"];

describe("videoEncoderOptions: portable preset -> encoder options", () => {
  it.each([
    ["libx264", ["ultrafast", "veryfast", "medium", "slow", "veryslow"].map((p) => ["-preset", p])],
    ["libx265", ["ultrafast", "veryfast", "medium", "slow", "veryslow"].map((p) => ["-preset", p])],
    ["libsvtav1", ["12", "10", "8", "6", "4"].map((p) => ["-preset", p])],
    [
      "libvpx-vp9",
      [
        ["-deadline", "realtime", "-cpu-used", "8"],
        ["-deadline", "good", "-cpu-used", "5"],
        ["-deadline", "good", "-cpu-used", "2"],
        ["-deadline", "good", "-cpu-used", "1"],
        ["-deadline", "good", "-cpu-used", "0"],
      ],
    ],
    ["hevc_nvenc", ["p1", "p3", "p4", "p6", "p7"].map((p) => ["-preset", p])],
    ["vp9_qsv", ["veryfast", "faster", "medium", "slow", "veryslow"].map((p) => ["-preset", p])],
    ["av1_amf", ["speed", "speed", "balanced", "quality", "quality"].map((p) => ["-quality", p])],
  ])("%s", (encoder, expected) => {
    const width = expected[0]?.length ?? 0;
    expect(PRESETS.map((preset) => videoEncoderOptions(encoder, preset).slice(2, 2 + width))).toEqual(
      expected,
    );
  });

  it("each family's constant-quality options follow the preset", () => {
    expect(videoEncoderOptions("libx264", "medium")).toEqual([
      "-c:v",
      "libx264",
      "-preset",
      "medium",
      "-crf",
      "23",
    ]);
    expect(videoEncoderOptions("libsvtav1", "fast")).toEqual([
      "-c:v",
      "libsvtav1",
      "-preset",
      "10",
      "-crf",
      "35",
    ]);
    expect(videoEncoderOptions("h264_amf", "slow")).toEqual([
      "-c:v",
      "h264_amf",
      "-quality",
      "quality",
      "-rc",
      "cqp",
      "-qp_i",
      "23",
      "-qp_p",
      "23",
    ]);
  });

  it("every encoder of every pool in @tjm/protocol has a family", () => {
    for (const pool of WORKER_POOLS) {
      for (const encoder of Object.values(VIDEO_ENCODERS[pool]))
        expect(() => encoderFamily(encoder)).not.toThrow();
    }
    expect(() => encoderFamily("libtheora")).toThrow(/no preset mapping for encoder libtheora/);
  });

  it("qsv takes nv12, the rest yuv420p", () => {
    expect(encoderPixelFormat("qsv")).toBe("nv12");
    expect(encoderPixelFormat("nvenc")).toBe("yuv420p");
  });
});
