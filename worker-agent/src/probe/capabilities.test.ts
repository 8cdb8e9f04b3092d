import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { capabilityNames, deviceOf, type FfmpegListing } from "./capabilities.ts";
import type { HardwareEncoderResult } from "./certify.ts";
import { parseCodecList, parseFilters, parseHwaccels } from "./parse.ts";

const recorded = (file: string) =>
  readFileSync(new URL(`./fixtures/debian-5.1/${file}`, import.meta.url), "utf8");

const debian: FfmpegListing = {
  encoders: parseCodecList(recorded("encoders.txt"), "Encoders").map((entry) => entry.name),
  decoders: parseCodecList(recorded("decoders.txt"), "Decoders").map((entry) => entry.name),
  filters: parseFilters(recorded("filters.txt")).map((entry) => entry.name),
  hwaccels: parseHwaccels(recorded("hwaccels.txt")),
};

const passed = (name: string): HardwareEncoderResult => ({ name, status: "passed" });
const failed = (name: string): HardwareEncoderResult => ({ name, status: "failed", reason: "no device" });
const everyDebianSelfTestFailed = [
  "h264_nvenc",
  "hevc_nvenc",
  "h264_qsv",
  "hevc_qsv",
  "h264_vaapi",
  "hevc_vaapi",
].map(failed);

/** The Manager's pool rule (manager/src/jobs/plan.ts), restated so the tests read the names as it does. */
const managerPool = (name: string) =>
  /nvenc|cuda|cuvid|nvdec|npp/.test(name)
    ? "nvidia"
    : /qsv/.test(name)
      ? "intel"
      : /amf/.test(name)
        ? "amd"
        : undefined;

describe("deviceOf", () => {
  it.each([
    ["h264_nvenc", "nvidia"],
    ["h264_cuvid", "nvidia"],
    ["scale_cuda", "nvidia"],
    ["scale_npp", "nvidia"],
    ["cuda", "nvidia"],
    ["vpp_qsv", "intel"],
    ["qsv", "intel"],
    ["h264_amf", "amd"],
    ["scale_vaapi", "vaapi"],
    ["h264_v4l2m2m", "unverified"],
    ["h264_omx", "unverified"],
    ["avgblur_opencl", "unverified"],
    ["openclsrc", "unverified"],
    ["scale_vulkan", "unverified"],
    ["libplacebo", "unverified"],
    ["vdpau", "unverified"],
    ["drm", "unverified"],
    ["h264_videotoolbox", "unverified"],
    ["libx264", undefined],
    ["drmeter", undefined],
    ["hwupload", undefined],
    ["aac", undefined],
  ])("%s needs %s", (name, device) => {
    expect(deviceOf(name)).toBe(device);
  });
});

describe("capabilityNames on Debian's build with no GPU", () => {
  const names = capabilityNames(debian, everyDebianSelfTestFailed);

  it("reports the software encoders by their bare names", () => {
    expect(names).toEqual(expect.arrayContaining(["libx264", "libx265", "libsvtav1", "libvpx-vp9", "aac"]));
  });

  it("reports decoders, filters and hwaccels with their prefix", () => {
    expect(names).toEqual(
      expect.arrayContaining(["decoder:h264", "decoder:aac", "filter:scale", "filter:hwupload"]),
    );
  });

  it("reports nothing tied to a GPU vendor, so the Manager routes no GPU job here", () => {
    expect(names.filter((name) => managerPool(name) !== undefined)).toEqual([]);
    expect(names.filter((name) => name.includes("vaapi"))).toEqual([]);
  });

  it("reports no device API it could not test", () => {
    expect(names).not.toEqual(
      expect.arrayContaining(["h264_v4l2m2m", "h264_omx", "filter:avgblur_opencl", "hwaccel:vdpau"]),
    );
    expect(names.filter((name) => name.startsWith("hwaccel:"))).toEqual([]);
  });

  it("counts: every listed name but the device-bound ones", () => {
    const encoders = names.filter((name) => !name.includes(":"));
    expect(encoders).toHaveLength(debian.encoders.length - 20);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe("capabilityNames once a vendor's encoder passed", () => {
  it("h264_nvenc passing reports it with NVIDIA's decoders, filters and hwaccel, and nothing of other vendors", () => {
    const names = capabilityNames(debian, [passed("h264_nvenc"), failed("hevc_nvenc"), failed("h264_qsv")]);
    expect(names).toEqual(
      expect.arrayContaining([
        "h264_nvenc",
        "decoder:h264_cuvid",
        "filter:scale_cuda",
        "filter:hwupload_cuda",
        "hwaccel:cuda",
      ]),
    );
    expect(names).not.toContain("hevc_nvenc");
    expect(names.filter((name) => managerPool(name) === "intel")).toEqual([]);
    expect(names).not.toContain("hwaccel:vaapi");
  });

  it("h264_qsv passing reports Quick Sync names, the encoders that were not self-tested excepted", () => {
    const names = capabilityNames(debian, [passed("h264_qsv")]);
    expect(names).toEqual(
      expect.arrayContaining(["h264_qsv", "decoder:h264_qsv", "filter:vpp_qsv", "hwaccel:qsv"]),
    );
    expect(names).not.toContain("vp9_qsv");
    expect(names.filter((name) => managerPool(name) === "nvidia")).toEqual([]);
  });

  it("h264_vaapi passing reports VA-API names", () => {
    const names = capabilityNames(debian, [passed("h264_vaapi")]);
    expect(names).toEqual(expect.arrayContaining(["h264_vaapi", "filter:scale_vaapi", "hwaccel:vaapi"]));
    expect(names).not.toContain("vp9_vaapi");
  });

  it("h264_amf passing reports it", () => {
    const listing = { ...debian, encoders: [...debian.encoders, "h264_amf"] };
    expect(capabilityNames(listing, [passed("h264_amf")])).toContain("h264_amf");
  });
});
