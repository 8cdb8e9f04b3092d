/**
 * Proves a listed hardware encoder works on this host by encoding one frame with it.
 * Opening the encoder is what fails when the driver, the device or a session is missing,
 * so one tiny black frame from lavfi, thrown away by the null muxer, is enough.
 */
import { encoderFamily, type HardwareEncoderResult } from "./certify.ts";
import { isNvencChatter, nvencFailureReason } from "./nvenc-failure.ts";
import { failureReason } from "./parse.ts";
import { describeExit, runFfmpeg } from "./run-ffmpeg.ts";

/** The DRM render node of the first GPU, where VA-API drivers are opened on Linux. */
export const VAAPI_DEVICE = "/dev/dri/renderD128";

/**
 * 256x144 is the smallest output a job may ask for (144 p at 16:9): a frame a real job
 * could produce, encoded in milliseconds. `-v error` leaves only the lines that explain a
 * failure on stderr. Per family:
 * - nvenc: takes ordinary yuv420p frames from memory and uploads them itself. Logged at
 *   `-v verbose`, where the wrapper names the GPUs it found: a GPU without an NVENC engine is
 *   reported by name (nvenc-failure.ts).
 * - qsv: takes frames from memory too, but in nv12, Quick Sync's native layout.
 * - amf: takes yuv420p frames from memory, like nvenc.
 * - vaapi: encodes only frames already on the device, so the device is opened first
 *   (-vaapi_device, a global option, before the input) and the frame converted to nv12 and
 *   uploaded (hwupload).
 */
export function selfTestArgs(encoder: string): string[] {
  const family = encoderFamily(encoder);
  const device = family === "vaapi" ? ["-vaapi_device", VAAPI_DEVICE] : [];
  const level = family === "nvenc" ? "verbose" : "error";
  const filter =
    family === "vaapi" ? ["-vf", "format=nv12,hwupload"] : family === "qsv" ? ["-vf", "format=nv12"] : [];
  return [
    ...["-hide_banner", "-nostdin", "-v", level],
    ...device,
    ...["-f", "lavfi", "-i", "color=c=black:s=256x144:d=0.04"],
    ...filter,
    ...["-frames:v", "1", "-c:v", encoder, "-f", "null", "-"],
  ];
}

export async function selfTestEncoder(
  ffmpegPath: string,
  encoder: string,
  timeoutMs: number,
): Promise<HardwareEncoderResult> {
  const run = await runFfmpeg(ffmpegPath, selfTestArgs(encoder), timeoutMs);
  if (run.timedOut) return { name: encoder, status: "failed", reason: `timed out after ${timeoutMs} ms` };
  if (run.exitCode === 0) return { name: encoder, status: "passed" };
  const reason =
    encoderFamily(encoder) === "nvenc"
      ? (nvencFailureReason(run.stderr, encoder) ?? failureReason(run.stderr, encoder, isNvencChatter))
      : failureReason(run.stderr, encoder);
  return { name: encoder, status: "failed", reason: reason ?? describeExit(run) };
}

/**
 * One encoder at a time: simultaneous tests would compete for the same NVENC sessions and
 * a failure could belong to either.
 */
export async function selfTestEncoders(
  ffmpegPath: string,
  encoders: readonly string[],
  timeoutMs: number,
): Promise<HardwareEncoderResult[]> {
  const results: HardwareEncoderResult[] = [];
  for (const encoder of encoders) results.push(await selfTestEncoder(ffmpegPath, encoder, timeoutMs));
  return results;
}
