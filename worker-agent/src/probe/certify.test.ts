import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  capacity,
  certify,
  defaultCapacity,
  encoderFamily,
  type HardwareEncoderResult,
  listedHardwareEncoders,
  NVENC_SESSION_LIMIT,
  SELF_TESTED_ENCODERS,
  type WorkerPool,
} from "./certify.ts";
import { parseCodecList } from "./parse.ts";

const debianEncoders = parseCodecList(
  readFileSync(new URL("./fixtures/debian-5.1/encoders.txt", import.meta.url), "utf8"),
  "Encoders",
).map((entry) => entry.name);

const passed = (name: string): HardwareEncoderResult => ({ name, status: "passed" });
const failed = (name: string, reason: string): HardwareEncoderResult => ({ name, status: "failed", reason });

describe("hardware encoders to self-test", () => {
  it("are h264, hevc and av1 for each of nvenc, qsv, amf and vaapi", () => {
    expect(SELF_TESTED_ENCODERS).toEqual([
      "h264_nvenc",
      "hevc_nvenc",
      "av1_nvenc",
      "h264_qsv",
      "hevc_qsv",
      "av1_qsv",
      "h264_amf",
      "hevc_amf",
      "av1_amf",
      "h264_vaapi",
      "hevc_vaapi",
      "av1_vaapi",
    ]);
  });

  it("Debian's build lists six of them", () => {
    expect(listedHardwareEncoders(debianEncoders)).toEqual([
      "h264_nvenc",
      "hevc_nvenc",
      "h264_qsv",
      "hevc_qsv",
      "h264_vaapi",
      "hevc_vaapi",
    ]);
  });

  it("a software-only build lists none", () => {
    expect(listedHardwareEncoders(["libx264", "aac", "libvpx-vp9"])).toEqual([]);
  });

  it.each([
    ["h264_nvenc", "nvenc"],
    ["av1_qsv", "qsv"],
    ["hevc_amf", "amf"],
    ["h264_vaapi", "vaapi"],
    ["libx264", undefined],
    ["h264_v4l2m2m", undefined],
  ])("%s belongs to family %s", (encoder, family) => {
    expect(encoderFamily(encoder)).toBe(family);
  });
});

describe("certify", () => {
  it("a cpu pool with libx264 and aac is READY, whatever its hardware encoders did", () => {
    const selfTests = [failed("h264_nvenc", "Cannot load libcuda.so.1")];
    expect(certify("cpu", debianEncoders, selfTests)).toEqual({ status: "READY", reasons: [] });
  });

  it("a cpu pool without libx264 or aac is DEGRADED, one reason each", () => {
    expect(certify("cpu", ["libopenh264", "libopus"], [])).toEqual({
      status: "DEGRADED",
      reasons: [
        "required encoder libx264 is not listed by ffmpeg -encoders",
        "required encoder aac is not listed by ffmpeg -encoders",
      ],
    });
  });

  it.each([
    ["nvidia", "h264_nvenc"],
    ["intel", "h264_qsv"],
    ["amd", "h264_amf"],
  ] as [WorkerPool, string][])("an %s pool whose %s passed is READY", (pool, encoder) => {
    expect(certify(pool, [encoder, "aac"], [passed(encoder)])).toEqual({ status: "READY", reasons: [] });
  });

  it("a GPU pool whose required encoder failed is DEGRADED with the self-test's reason", () => {
    const selfTests = [failed("h264_nvenc", "Cannot load libcuda.so.1"), passed("hevc_nvenc")];
    expect(certify("nvidia", debianEncoders, selfTests)).toEqual({
      status: "DEGRADED",
      reasons: ["required encoder h264_nvenc failed its self-test: Cannot load libcuda.so.1"],
    });
  });

  it("a GPU pool is READY when its required encoder passed even if another of its encoders failed", () => {
    const selfTests = [passed("h264_nvenc"), failed("hevc_nvenc", "timed out after 10000 ms")];
    expect(certify("nvidia", debianEncoders, selfTests).status).toBe("READY");
  });

  it("an amd pool on a build without AMF is DEGRADED: the encoder is not listed", () => {
    expect(certify("amd", debianEncoders, [])).toEqual({
      status: "DEGRADED",
      reasons: ["required encoder h264_amf is not listed by ffmpeg -encoders"],
    });
  });

  it("a listed required hardware encoder without a self-test result is not trusted", () => {
    expect(certify("intel", debianEncoders, [])).toEqual({
      status: "DEGRADED",
      reasons: ["required encoder h264_qsv was not self-tested"],
    });
  });

  it("a GPU pool needs aac as well", () => {
    expect(certify("nvidia", ["h264_nvenc"], [passed("h264_nvenc")]).reasons).toEqual([
      "required encoder aac is not listed by ffmpeg -encoders",
    ]);
  });
});

describe("capacity", () => {
  it.each([
    ["cpu", 1, 1],
    ["cpu", 2, 1],
    ["cpu", 3, 1],
    ["cpu", 16, 8],
    ["cpu", 0, 1],
    ["nvidia", 2, 2],
    ["nvidia", 8, 8],
    ["nvidia", 64, 8],
    ["intel", 6, 6],
    ["amd", 12, 12],
    ["amd", 0, 1],
  ] as [WorkerPool, number, number][])(
    "a %s host with %i cores takes %i jobs by default",
    (pool, cores, jobs) => {
      expect(defaultCapacity(pool, cores)).toBe(jobs);
    },
  );

  it("WORKER_CAPACITY lowers the default", () => {
    expect(capacity("cpu", 16, 3)).toBe(3);
    expect(capacity("nvidia", 32, 2)).toBe(2);
  });

  it("WORKER_CAPACITY never raises the default", () => {
    expect(capacity("cpu", 4, 10)).toBe(2);
    expect(capacity("nvidia", 64, 20)).toBe(NVENC_SESSION_LIMIT);
  });

  it("without WORKER_CAPACITY the default stands", () => {
    expect(capacity("intel", 4)).toBe(4);
  });
});
