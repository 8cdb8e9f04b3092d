import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { encoderMessages, isNvencChatter, nvencFailureReason, nvencGpuNames } from "./nvenc-failure.ts";
import { failureReason } from "./parse.ts";

/** Recorded ffmpeg output; each fixture folder's README.md says where and how. */
const recorded = (file: string) => readFileSync(new URL(`./fixtures/${file}`, import.meta.url), "utf8");

/** On an H200: FFmpeg 8, verbose, as transcribed on the host (fixtures/nvidia-h200/README.md). */
const H200 = recorded("nvidia-h200/self-test-verbose-h264_nvenc.stderr");
/** Debian's ffmpeg 5.1 on this machine, no NVIDIA driver: at `-v error` and at `-v verbose`. */
const NO_DRIVER_ERROR = recorded("debian-5.1/self-test-h264_nvenc.stderr");
const NO_DRIVER_VERBOSE = recorded("debian-5.1/self-test-verbose-h264_nvenc.stderr");
/**
 * Not recorded on a host: the H200 log with its failing line replaced by the line FFmpeg's nvenc
 * wrapper prints for that cause (the messages fixtures/nvidia-h200/README.md lists).
 */
const withFailure = (line: string) =>
  H200.replace("OpenEncodeSessionEx failed: unsupported device (2): (no details)", line);
const NO_ENCODE_LIBRARY = [
  "[h264_nvenc @ 0x55d0c0a3b500] Cannot load libnvidia-encode.so.1",
  "[h264_nvenc @ 0x55d0c0a3b500] The minimum required Nvidia driver for nvenc is 570.0 or newer",
].join("\n");
const SESSION_LIMIT = withFailure("OpenEncodeSessionEx failed: incompatible client key (21): (no details)");
const SESSION_OUT_OF_MEMORY = withFailure("OpenEncodeSessionEx failed: out of memory (10): (no details)");

describe("nvencFailureReason", () => {
  it("names the GPU that has no NVENC engine and sends the host to the cpu pool (recorded on an H200)", () => {
    expect(nvencFailureReason(H200, "h264_nvenc")).toBe(
      "NVIDIA H200 has no NVENC encoder engine (data-centre GPUs such as the A100, H100 and H200 decode on the GPU but cannot encode): enrol this host in the cpu pool, where it can still decode with hwaccel cuda (ffmpeg: OpenEncodeSessionEx failed: unsupported device (2): (no details))",
    );
  });

  it("reads the same cause under hevc_nvenc and av1_nvenc, which logged the same lines", () => {
    for (const encoder of ["hevc_nvenc", "av1_nvenc"]) {
      const log = H200.replaceAll("[h264_nvenc]", `[${encoder}]`);
      expect(nvencFailureReason(log, encoder)).toMatch(/^NVIDIA H200 has no NVENC encoder engine /);
    }
  });

  it.each([
    ["-v error", NO_DRIVER_ERROR],
    ["-v verbose", NO_DRIVER_VERBOSE],
  ])("says the driver library is missing when libcuda cannot be loaded (recorded, %s)", (_level, log) => {
    expect(nvencFailureReason(log, "h264_nvenc")).toBe(
      "the NVIDIA driver library (libcuda) is missing: install the NVIDIA driver, or run the container with the NVIDIA Container Toolkit (ffmpeg: Cannot load libcuda.so.1)",
    );
  });

  it("says the encode library is missing when libnvidia-encode cannot be loaded", () => {
    expect(nvencFailureReason(NO_ENCODE_LIBRARY, "h264_nvenc")).toBe(
      'the NVIDIA encode library (libnvidia-encode) is missing although the driver is present: install the driver\'s encode library, or in a container add "video" to NVIDIA_DRIVER_CAPABILITIES (ffmpeg: Cannot load libnvidia-encode.so.1)',
    );
  });

  it.each([
    ["incompatible client key (21)", SESSION_LIMIT],
    ["out of memory (10)", SESSION_OUT_OF_MEMORY],
  ])("says the session limit is reached, naming the GPU, on %s", (code, log) => {
    expect(nvencFailureReason(log, "h264_nvenc")).toBe(
      `NVIDIA H200 refused another NVENC session: the driver's limit of concurrent encode sessions is reached (other processes hold them); lower WORKER_CAPACITY or stop the other encoders (ffmpeg: OpenEncodeSessionEx failed: ${code}: (no details))`,
    );
  });

  it("gives each cause its own sentence", () => {
    const sentences = [H200, NO_DRIVER_ERROR, NO_ENCODE_LIBRARY, SESSION_LIMIT].map((log) =>
      nvencFailureReason(log, "h264_nvenc")?.replace(/ \(ffmpeg: .*\)$/, ""),
    );
    expect(new Set(sentences).size).toBe(4);
  });

  it("leaves other failures to the encoder's own last message, not the wrapper's chatter", () => {
    const log = withFailure("InitializeEncoder failed: invalid param (8): Invalid Level.");
    expect(nvencFailureReason(log, "h264_nvenc")).toBeUndefined();
    expect(failureReason(log, "h264_nvenc")).toBe("Nvenc unloaded");
    expect(failureReason(log, "h264_nvenc", isNvencChatter)).toBe("No capable devices found");
  });

  it("reads only the named encoder's lines, with or without the context's address", () => {
    expect(encoderMessages(NO_DRIVER_VERBOSE, "h264_nvenc")).toEqual([
      "Cannot load libcuda.so.1",
      "Nvenc unloaded",
    ]);
    expect(nvencGpuNames(encoderMessages(H200, "h264_nvenc"))).toEqual(["NVIDIA H200"]);
    expect(nvencFailureReason(H200, "hevc_nvenc")).toBeUndefined();
  });
});
