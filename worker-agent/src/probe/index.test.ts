import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FfmpegUnavailableError, probeFfmpeg } from "./index.ts";

/** Debian's ffmpeg from PATH: real, and on this machine without any GPU. */
const REAL_FFMPEG = "ffmpeg";
/** FAKE: stands in for a GPU ffmpeg (see the script's header); it prints Debian's recorded listings. */
const FAKE_FFMPEG = fileURLToPath(new URL("./fixtures/fake-ffmpeg/ffmpeg", import.meta.url));
const NO_DRIVER =
  "the NVIDIA driver library (libcuda) is missing: install the NVIDIA driver, or run the container with the NVIDIA Container Toolkit (ffmpeg: Cannot load libcuda.so.1)";
const SESSION_LIMIT =
  "this host's GPU refused another NVENC session: the driver's limit of concurrent encode sessions is reached (other processes hold them); lower WORKER_CAPACITY or stop the other encoders (ffmpeg: OpenEncodeSessionEx failed: out of memory (10))";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("probeFfmpeg with Debian's real ffmpeg", () => {
  it("a cpu Worker is READY with the software encoders Debian ships", async () => {
    const report = await probeFfmpeg({ ffmpegPath: REAL_FFMPEG, pool: "cpu", cores: 4 });
    expect(report.ffmpegVersion).toMatch(/^5\.1\.\d+-0\+deb12u\d+$/);
    expect(report.capabilities).toEqual(
      expect.arrayContaining([
        "libx264",
        "aac",
        "libx265",
        "libsvtav1",
        "libaom-av1",
        "libvpx-vp9",
        "libopus",
      ]),
    );
    expect(report.certification).toEqual({ status: "READY", reasons: [] });
    expect(report.capacity).toBe(2);
  });

  it("every hardware encoder the build lists fails its real self-test, and none is reported", async () => {
    const report = await probeFfmpeg({ ffmpegPath: REAL_FFMPEG, pool: "cpu", cores: 4 });
    expect(report.hardwareEncoders).toEqual([
      { name: "h264_nvenc", status: "failed", reason: NO_DRIVER },
      { name: "hevc_nvenc", status: "failed", reason: NO_DRIVER },
      {
        name: "h264_qsv",
        status: "failed",
        reason: "Error initializing an internal MFX session: unsupported (-3)",
      },
      {
        name: "hevc_qsv",
        status: "failed",
        reason: "Error initializing an internal MFX session: unsupported (-3)",
      },
      { name: "h264_vaapi", status: "failed", reason: "No VA display found for device /dev/dri/renderD128." },
      { name: "hevc_vaapi", status: "failed", reason: "No VA display found for device /dev/dri/renderD128." },
    ]);
    expect(
      report.capabilities.filter((name) => /nvenc|cuda|cuvid|nvdec|npp|qsv|amf|vaapi/.test(name)),
    ).toEqual([]);
  });

  it("an nvidia Worker is DEGRADED: Debian's h264_nvenc cannot load libcuda, the driver is missing", async () => {
    const report = await probeFfmpeg({ ffmpegPath: REAL_FFMPEG, pool: "nvidia", cores: 4 });
    expect(report.certification).toEqual({
      status: "DEGRADED",
      reasons: [`required encoder h264_nvenc failed its self-test: ${NO_DRIVER}`],
    });
    expect(report.capabilities).not.toContain("h264_nvenc");
  });

  it("WORKER_CAPACITY caps the capacity", async () => {
    const report = await probeFfmpeg({ ffmpegPath: REAL_FFMPEG, pool: "cpu", cores: 16, capacityCap: 3 });
    expect(report.capacity).toBe(3);
  });
});

describe("probeFfmpeg without a usable ffmpeg", () => {
  it("a missing binary is a clear error naming the path and FFMPEG_PATH", async () => {
    const probe = probeFfmpeg({ ffmpegPath: "/nonexistent/ffmpeg", pool: "cpu" });
    await expect(probe).rejects.toThrow(FfmpegUnavailableError);
    await expect(probe).rejects.toThrow("ffmpeg not found at /nonexistent/ffmpeg: set FFMPEG_PATH");
  });

  it("a file that is not executable is a clear error too", async () => {
    const notExecutable = fileURLToPath(new URL("./fixtures/debian-5.1/README.md", import.meta.url));
    await expect(probeFfmpeg({ ffmpegPath: notExecutable, pool: "cpu" })).rejects.toThrow(
      `ffmpeg at ${notExecutable} is not executable: set FFMPEG_PATH`,
    );
  });

  it("a listing that fails is an error saying how it ended", async () => {
    await expect(probeFfmpeg({ ffmpegPath: "/bin/false", pool: "cpu" })).rejects.toThrow(
      /^ffmpeg -(version|encoders|decoders|filters|hwaccels) exited with code 1$/,
    );
  });

  it("a listing that hangs is killed and reported as timed out (FAKE ffmpeg)", async () => {
    vi.stubEnv("FAKE_FFMPEG_LISTINGS", "hang");
    await expect(probeFfmpeg({ ffmpegPath: FAKE_FFMPEG, pool: "cpu", timeoutMs: 300 })).rejects.toThrow(
      /^ffmpeg -(version|encoders|decoders|filters|hwaccels) timed out after 300 ms$/,
    );
  });

  it("a program that is not ffmpeg is refused by the listing parsers", async () => {
    await expect(probeFfmpeg({ ffmpegPath: "/bin/echo", pool: "cpu" })).rejects.toThrow(
      "not the output of ffmpeg -version",
    );
  });
});

describe("probeFfmpeg with GPU builds (FAKE ffmpeg: real Debian listings, chosen self-test outcomes)", () => {
  it("an nvidia Worker whose NVENC passes is READY and reports NVIDIA's names", async () => {
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_nvenc", "pass");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_hevc_nvenc", "pass");
    const report = await probeFfmpeg({ ffmpegPath: FAKE_FFMPEG, pool: "nvidia", cores: 32 });
    expect(report.certification).toEqual({ status: "READY", reasons: [] });
    expect(report.capabilities).toEqual(
      expect.arrayContaining([
        "h264_nvenc",
        "hevc_nvenc",
        "decoder:h264_cuvid",
        "filter:scale_cuda",
        "hwaccel:cuda",
      ]),
    );
    expect(report.capabilities.filter((name) => /qsv|vaapi/.test(name))).toEqual([]);
    expect(report.capacity).toBe(8);
  });

  it("an intel Worker whose Quick Sync passes is READY", async () => {
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_qsv", "pass");
    const report = await probeFfmpeg({ ffmpegPath: FAKE_FFMPEG, pool: "intel", cores: 6 });
    expect(report.certification).toEqual({ status: "READY", reasons: [] });
    expect(report.capabilities).toEqual(expect.arrayContaining(["h264_qsv", "hwaccel:qsv"]));
    expect(report.capabilities).not.toContain("hevc_qsv");
    expect(report.capacity).toBe(6);
  });

  it("an amd Worker whose AMF passes is READY (the AMF rows are the fake's, Debian lists none)", async () => {
    vi.stubEnv("FAKE_FFMPEG_EXTRA_ENCODERS", "h264_amf hevc_amf av1_amf");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_amf", "pass");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_hevc_amf", "pass");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_av1_amf", "fail:AV1 encoding is not supported on this GPU");
    const report = await probeFfmpeg({ ffmpegPath: FAKE_FFMPEG, pool: "amd", cores: 8, capacityCap: 2 });
    expect(report.certification).toEqual({ status: "READY", reasons: [] });
    expect(report.hardwareEncoders.filter((encoder) => encoder.name.endsWith("_amf"))).toEqual([
      { name: "h264_amf", status: "passed" },
      { name: "hevc_amf", status: "passed" },
      { name: "av1_amf", status: "failed", reason: "AV1 encoding is not supported on this GPU" },
    ]);
    expect(report.capabilities).toEqual(expect.arrayContaining(["h264_amf", "hevc_amf"]));
    expect(report.capabilities).not.toContain("av1_amf");
    expect(report.capacity).toBe(2);
  });

  it("an nvidia Worker on an H200 is DEGRADED: the GPU, named, has no NVENC engine (recorded output replayed)", async () => {
    for (const encoder of ["h264_nvenc", "hevc_nvenc"]) {
      vi.stubEnv(`FAKE_FFMPEG_OUTCOME_${encoder}`, `replay:nvidia-h200/self-test-verbose-${encoder}.stderr`);
    }
    const report = await probeFfmpeg({ ffmpegPath: FAKE_FFMPEG, pool: "nvidia", cores: 8 });
    expect(report.certification.status).toBe("DEGRADED");
    expect(report.certification.reasons).toEqual([
      expect.stringMatching(
        /^required encoder h264_nvenc failed its self-test: NVIDIA H200 has no NVENC encoder engine .*enrol this host in the cpu pool/,
      ),
    ]);
    expect(report.capabilities.filter((name) => name.endsWith("_nvenc"))).toEqual([]);
  });

  it("an nvidia Worker whose NVENC fails is DEGRADED with the cause's own sentence", async () => {
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_nvenc", "fail:OpenEncodeSessionEx failed: out of memory (10)");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_hevc_nvenc", "pass");
    const report = await probeFfmpeg({ ffmpegPath: FAKE_FFMPEG, pool: "nvidia", cores: 8 });
    expect(report.certification).toEqual({
      status: "DEGRADED",
      reasons: [`required encoder h264_nvenc failed its self-test: ${SESSION_LIMIT}`],
    });
    expect(report.capabilities).toContain("hevc_nvenc");
    expect(report.capabilities).not.toContain("h264_nvenc");
  });

  it("an nvidia Worker whose NVENC hangs is DEGRADED as timed out", async () => {
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_nvenc", "hang");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_hevc_nvenc", "pass");
    const report = await probeFfmpeg({ ffmpegPath: FAKE_FFMPEG, pool: "nvidia", cores: 8, timeoutMs: 1_500 });
    expect(report.certification).toEqual({
      status: "DEGRADED",
      reasons: ["required encoder h264_nvenc failed its self-test: timed out after 1500 ms"],
    });
  });
});
