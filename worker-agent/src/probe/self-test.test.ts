import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { selfTestArgs, selfTestEncoder, selfTestEncoders } from "./self-test.ts";

/** Debian's ffmpeg from PATH: real, and on this machine without any GPU. */
const REAL_FFMPEG = "ffmpeg";
/** FAKE: stands in for a GPU ffmpeg (see the script's header); outcomes are set per test. */
const FAKE_FFMPEG = fileURLToPath(new URL("./fixtures/fake-ffmpeg/ffmpeg", import.meta.url));

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("selfTestArgs", () => {
  const lavfiFrame = ["-f", "lavfi", "-i", "color=c=black:s=256x144:d=0.04"];
  const quiet = ["-hide_banner", "-nostdin", "-v", "error"];

  it("nvenc and amf encode the lavfi frame as it comes; nvenc logs verbosely, naming its GPUs", () => {
    expect(selfTestArgs("h264_nvenc")).toEqual([
      ...["-hide_banner", "-nostdin", "-v", "verbose"],
      ...lavfiFrame,
      ...["-frames:v", "1", "-c:v", "h264_nvenc", "-f", "null", "-"],
    ]);
    expect(selfTestArgs("av1_amf")).toEqual([
      ...quiet,
      ...lavfiFrame,
      ...["-frames:v", "1", "-c:v", "av1_amf", "-f", "null", "-"],
    ]);
  });

  it("qsv gets the frame in nv12", () => {
    expect(selfTestArgs("hevc_qsv")).toEqual([
      ...quiet,
      ...lavfiFrame,
      ...["-vf", "format=nv12", "-frames:v", "1", "-c:v", "hevc_qsv", "-f", "null", "-"],
    ]);
  });

  it("vaapi opens the render node before the input and uploads an nv12 frame to it", () => {
    expect(selfTestArgs("h264_vaapi")).toEqual([
      ...quiet,
      ...["-vaapi_device", "/dev/dri/renderD128"],
      ...lavfiFrame,
      ...["-vf", "format=nv12,hwupload", "-frames:v", "1", "-c:v", "h264_vaapi", "-f", "null", "-"],
    ]);
  });
});

describe("self-test with Debian's real ffmpeg on a machine without a GPU", () => {
  it.each([
    [
      "h264_nvenc",
      expect.stringMatching(
        /^the NVIDIA driver library \(libcuda\) is missing: .*\(ffmpeg: Cannot load libcuda\.so\.1\)$/,
      ),
    ],
    [
      "hevc_nvenc",
      expect.stringMatching(
        /^the NVIDIA driver library \(libcuda\) is missing: .*\(ffmpeg: Cannot load libcuda\.so\.1\)$/,
      ),
    ],
    ["h264_qsv", "Error initializing an internal MFX session: unsupported (-3)"],
    ["h264_vaapi", "No VA display found for device /dev/dri/renderD128."],
  ])("%s fails: %s", async (encoder, reason) => {
    expect(await selfTestEncoder(REAL_FFMPEG, encoder, 10_000)).toEqual({
      name: encoder,
      status: "failed",
      reason,
    });
  });

  it("a software encoder run through the same one-frame encode passes, so the command itself is sound", async () => {
    expect(await selfTestEncoder(REAL_FFMPEG, "libx264", 10_000)).toEqual({
      name: "libx264",
      status: "passed",
    });
  });
});

describe("self-test branches a CPU machine cannot reach (FAKE ffmpeg)", () => {
  it("an encoder that encodes its frame passes", async () => {
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_nvenc", "pass");
    expect(await selfTestEncoder(FAKE_FFMPEG, "h264_nvenc", 10_000)).toEqual({
      name: "h264_nvenc",
      status: "passed",
    });
  });

  it("an encoder that cannot open fails with the encoder's own message", async () => {
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_qsv", "fail:Error initializing an MFX session: -9");
    expect(await selfTestEncoder(FAKE_FFMPEG, "h264_qsv", 10_000)).toEqual({
      name: "h264_qsv",
      status: "failed",
      reason: "Error initializing an MFX session: -9",
    });
  });

  it("an encoder that hangs is killed at the timeout and fails as timed out", async () => {
    const pidDirectory = mkdtempSync(join(tmpdir(), "tjm-self-test-"));
    onTestFinished(() => rmSync(pidDirectory, { recursive: true, force: true }));
    const pidFile = join(pidDirectory, "pid");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_amf", "hang");
    vi.stubEnv("FAKE_FFMPEG_PID_FILE", pidFile);
    const started = performance.now();
    expect(await selfTestEncoder(FAKE_FFMPEG, "h264_amf", 300)).toEqual({
      name: "h264_amf",
      status: "failed",
      reason: "timed out after 300 ms",
    });
    expect(performance.now() - started).toBeLessThan(5_000);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  it("several encoders are tested in the order given, each with its own outcome", async () => {
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_h264_nvenc", "pass");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_hevc_nvenc", "fail:No capable devices found");
    vi.stubEnv("FAKE_FFMPEG_OUTCOME_av1_nvenc", "hang");
    expect(await selfTestEncoders(FAKE_FFMPEG, ["h264_nvenc", "hevc_nvenc", "av1_nvenc"], 1_000)).toEqual([
      { name: "h264_nvenc", status: "passed" },
      // None of the four known causes: the encoder's own last message, as for other families.
      { name: "hevc_nvenc", status: "failed", reason: "No capable devices found" },
      { name: "av1_nvenc", status: "failed", reason: "timed out after 1000 ms" },
    ]);
  });
});
