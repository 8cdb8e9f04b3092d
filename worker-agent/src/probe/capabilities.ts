/**
 * The capability names a Worker reports, which the Manager matches against a job's
 * requiredCapabilities. No I/O.
 *
 *   encoder   the bare ffmpeg name: "libx264", "h264_nvenc" (jobs name encoders this way,
 *             the legacy codec names included)
 *   decoder   "decoder:h264_cuvid"
 *   filter    "filter:scale_cuda"
 *   hwaccel   "hwaccel:cuda"
 *
 * The prefixes keep a decoder from standing for the encoder of the same name (aac and
 * h264_qsv are both). The vendor words stay in the name, so the Manager's pool rule
 * (nvenc/cuda/cuvid/nvdec/npp -> nvidia, qsv -> intel, amf -> amd) reads every form.
 */
import { poolOfCapability } from "@tjm/protocol";
import type { HardwareEncoderResult } from "./certify.ts";

/** Hardware a name needs: a vendor the self-test can prove, or a device API it cannot. */
export type Device = "nvidia" | "intel" | "amd" | "vaapi" | "unverified";

/**
 * Words (between underscores) of device APIs the probe has no self-test for: V4L2 and
 * OpenMAX codecs, VDPAU, OpenCL and Vulkan filters (libplacebo runs on Vulkan), DRM, and
 * the macOS / Windows / Android / Raspberry Pi / Rockchip interfaces other builds carry.
 */
const UNVERIFIED_DEVICE_WORDS = new Set([
  "v4l2m2m",
  "omx",
  "vdpau",
  "opencl",
  "openclsrc",
  "vulkan",
  "libplacebo",
  "drm",
  "videotoolbox",
  "mf",
  "d3d11va",
  "d3d12va",
  "dxva2",
  "mediacodec",
  "mmal",
  "rkmpp",
]);

/** The vendor the Manager's pool rule names, VA-API, an API without a self-test, or none. */
export function deviceOf(name: string): Device | undefined {
  const vendor = poolOfCapability(name);
  if (vendor !== undefined) return vendor;
  const lower = name.toLowerCase();
  if (lower.includes("vaapi")) return "vaapi";
  return lower.split("_").some((word) => UNVERIFIED_DEVICE_WORDS.has(word)) ? "unverified" : undefined;
}

export interface FfmpegListing {
  encoders: readonly string[];
  decoders: readonly string[];
  filters: readonly string[];
  hwaccels: readonly string[];
}

/**
 * Everything the host can really do. A listed name proves only that the build knows it, so:
 * software names are reported as listed; a hardware encoder only when it passed its
 * self-test; a vendor's decoders, filters and hwaccel once one of that vendor's encoders
 * passed (the driver loads and a device answers; they are not tested one by one); names of
 * device APIs with no self-test never.
 */
export function capabilityNames(
  listing: FfmpegListing,
  selfTests: readonly HardwareEncoderResult[],
): string[] {
  const passed = new Set(selfTests.filter((test) => test.status === "passed").map((test) => test.name));
  const provenDevices = new Set([...passed].map(deviceOf));
  const usable = (name: string) => {
    const device = deviceOf(name);
    return device === undefined || (device !== "unverified" && provenDevices.has(device));
  };
  return [
    ...listing.encoders.filter((name) => deviceOf(name) === undefined || passed.has(name)),
    ...listing.decoders.filter(usable).map((name) => `decoder:${name}`),
    ...listing.filters.filter(usable).map((name) => `filter:${name}`),
    ...listing.hwaccels.filter(usable).map((name) => `hwaccel:${name}`),
  ];
}
