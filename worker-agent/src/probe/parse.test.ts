import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { failureReason, parseCodecList, parseFilters, parseHwaccels, parseVersion } from "./parse.ts";

/** Real output of Debian's ffmpeg 5.1.9; fixtures/debian-5.1/README.md says how it was recorded. */
const recorded = (file: string) =>
  readFileSync(new URL(`./fixtures/debian-5.1/${file}`, import.meta.url), "utf8");

describe("parseVersion", () => {
  const debian = parseVersion(recorded("version.txt"));

  it("reads the version string of Debian's build", () => {
    expect(debian.version).toBe("5.1.9-0+deb12u1");
  });

  it("reads every configure argument, the first and last included", () => {
    expect(debian.configuration).toHaveLength(74);
    expect(debian.configuration[0]).toBe("--prefix=/usr");
    expect(debian.configuration.at(-1)).toBe("--enable-shared");
    expect(debian.configuration).toEqual(
      expect.arrayContaining(["--enable-gpl", "--enable-libx264", "--enable-libsvtav1", "--enable-libmfx"]),
    );
  });

  it("keeps an argument configure quoted because it holds a space as one argument", () => {
    const text = [
      "ffmpeg version n7.1 Copyright (c) 2000-2024 the FFmpeg developers",
      "configuration: --enable-gpl '--extra-cflags=-O3 -march=native' --extra-version=ci",
    ].join("\n");
    expect(parseVersion(text)).toEqual({
      version: "n7.1",
      configuration: ["--enable-gpl", "--extra-cflags=-O3 -march=native", "--extra-version=ci"],
    });
  });

  it("a build without a configuration line has no configure arguments", () => {
    expect(parseVersion("ffmpeg version N-113000-g1234abcd\n").configuration).toEqual([]);
  });

  it("refuses text that is not ffmpeg -version output", () => {
    expect(() => parseVersion("ffprobe version 5.1.9\n")).toThrow(
      'not the output of ffmpeg -version: first line is "ffprobe version 5.1.9"',
    );
    expect(() => parseVersion("")).toThrow("not the output of ffmpeg -version");
  });
});

describe("parseCodecList", () => {
  const encoders = parseCodecList(recorded("encoders.txt"), "Encoders");
  const decoders = parseCodecList(recorded("decoders.txt"), "Decoders");
  const byName = (entries: typeof encoders, name: string) => entries.find((entry) => entry.name === name);

  it("reads every encoder row and none of the legend", () => {
    expect(encoders).toHaveLength(217);
    expect(encoders.filter((entry) => entry.type === "video")).toHaveLength(122);
    expect(encoders.filter((entry) => entry.type === "audio")).toHaveLength(84);
    expect(encoders.filter((entry) => entry.type === "subtitle")).toHaveLength(11);
    expect(encoders.map((entry) => entry.name)).not.toContain("=");
  });

  it("reads every decoder row", () => {
    expect(decoders).toHaveLength(516);
    expect(decoders.filter((entry) => entry.type === "video")).toHaveLength(291);
    expect(decoders.filter((entry) => entry.type === "audio")).toHaveLength(202);
    expect(decoders.filter((entry) => entry.type === "subtitle")).toHaveLength(23);
  });

  it("keeps each row's name, media type and description", () => {
    expect(encoders[0]).toEqual({
      name: "a64multi",
      type: "video",
      description: "Multicolor charset for Commodore 64 (codec a64_multi)",
    });
    expect(byName(encoders, "libx264")).toEqual({
      name: "libx264",
      type: "video",
      description: "libx264 H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10 (codec h264)",
    });
    expect(byName(encoders, "aac")).toEqual({
      name: "aac",
      type: "audio",
      description: "AAC (Advanced Audio Coding)",
    });
    expect(byName(encoders, "mov_text")?.type).toBe("subtitle");
    expect(byName(decoders, "h264")?.description).toBe("H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10");
    expect(byName(decoders, "subrip")?.type).toBe("subtitle");
  });

  it("finds the software encoders Debian ships", () => {
    const names = encoders.map((entry) => entry.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "libx264",
        "libx265",
        "libsvtav1",
        "libaom-av1",
        "librav1e",
        "libvpx-vp9",
        "libopus",
        "libmp3lame",
        "aac",
      ]),
    );
  });

  it("lists the hardware encoders Debian's build knows, without AMF or AV1 ones", () => {
    const hardware = encoders
      .map((entry) => entry.name)
      .filter((name) => /_(nvenc|qsv|amf|vaapi)$/.test(name));
    expect(hardware).toEqual([
      "h264_nvenc",
      "h264_qsv",
      "h264_vaapi",
      "hevc_nvenc",
      "hevc_qsv",
      "hevc_vaapi",
      "mjpeg_qsv",
      "mjpeg_vaapi",
      "mpeg2_qsv",
      "mpeg2_vaapi",
      "vp8_vaapi",
      "vp9_vaapi",
      "vp9_qsv",
    ]);
  });

  it("refuses the other listing, or text without the legend separator", () => {
    expect(() => parseCodecList(recorded("decoders.txt"), "Encoders")).toThrow(
      'not the output of ffmpeg -encoders: first line is "Decoders:"',
    );
    expect(() => parseCodecList("Encoders:\n V....D libx264   libx264\n", "Encoders")).toThrow(
      "not the output of ffmpeg -encoders",
    );
  });
});

describe("parseFilters", () => {
  const filters = parseFilters(recorded("filters.txt"));
  const byName = (name: string) => filters.find((filter) => filter.name === name);

  it("reads every filter row and none of the legend", () => {
    expect(filters).toHaveLength(527);
    expect(filters[0]?.name).toBe("abench");
  });

  it.each([
    ["scale", "video", "V", "V"],
    ["overlay", "video", "VV", "V"],
    ["split", "video", "V", "N"],
    ["color", "video", "|", "V"],
    ["buffersink", "video", "V", "|"],
    ["amix", "audio", "N", "A"],
    ["anullsink", "audio", "A", "|"],
    ["showwaves", "audio-video", "A", "V"],
    ["concat", "dynamic", "N", "N"],
  ])("%s is a %s filter (%s->%s)", (name, type, inputs, outputs) => {
    expect(byName(name)).toMatchObject({ name, type, inputs, outputs });
  });

  it("keeps the description", () => {
    expect(byName("scale_cuda")?.description).toBe("GPU accelerated video resizer");
  });

  it("refuses text that is not ffmpeg -filters output", () => {
    expect(() => parseFilters(recorded("hwaccels.txt"))).toThrow(
      'not the output of ffmpeg -filters: first line is "Hardware acceleration methods:"',
    );
  });
});

describe("parseHwaccels", () => {
  it("reads every method Debian's build lists, in its order", () => {
    expect(parseHwaccels(recorded("hwaccels.txt"))).toEqual([
      "vdpau",
      "cuda",
      "vaapi",
      "qsv",
      "drm",
      "opencl",
      "vulkan",
    ]);
  });

  it("a build without hardware acceleration lists none", () => {
    expect(parseHwaccels("Hardware acceleration methods:\n\n")).toEqual([]);
  });

  it("refuses text that is not ffmpeg -hwaccels output", () => {
    expect(() => parseHwaccels("")).toThrow('not the output of ffmpeg -hwaccels: first line is ""');
  });
});

describe("failureReason", () => {
  it.each([
    ["h264_nvenc", "Cannot load libcuda.so.1"],
    ["hevc_nvenc", "Cannot load libcuda.so.1"],
    ["h264_qsv", "Error initializing an internal MFX session: unsupported (-3)"],
    ["hevc_qsv", "Error initializing an internal MFX session: unsupported (-3)"],
    ["h264_vaapi", "No VA display found for device /dev/dri/renderD128."],
    ["hevc_vaapi", "No VA display found for device /dev/dri/renderD128."],
  ])("the recorded failure of %s says: %s", (encoder, reason) => {
    expect(failureReason(recorded(`self-test-${encoder}.stderr`), encoder)).toBe(reason);
  });

  it("prefers the encoder's own message over ffmpeg 6.1+'s per-stream summaries", () => {
    // Constructed in the shape of ffmpeg 7's log contexts, not recorded.
    const stderr = [
      "[h264_nvenc @ 0x1] OpenEncodeSessionEx failed: incompatible client key (21): (no details)",
      "[h264_nvenc @ 0x1] No capable devices found",
      "[vost#0:0/h264_nvenc @ 0x2] Error while opening encoder - maybe incorrect parameters",
      "[vf#0:0 @ 0x3] Task finished with error code: -1 (Operation not permitted)",
      "[out#0/null @ 0x4] Nothing was written into output file",
      "Conversion failed!",
    ].join("\n");
    expect(failureReason(stderr, "h264_nvenc")).toBe("No capable devices found");
  });

  it("without a context line, the last line is the reason", () => {
    expect(failureReason("Unknown encoder 'h264_amf'\n", "h264_amf")).toBe("Unknown encoder 'h264_amf'");
  });

  it("an empty stderr gives no reason", () => {
    expect(failureReason("\n", "h264_nvenc")).toBeUndefined();
  });
});
