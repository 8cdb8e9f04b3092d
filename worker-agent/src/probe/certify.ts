/**
 * Which hardware encoders the probe self-tests, what each pool requires, the certification
 * that follows, and the default capacity of a host. No I/O.
 */

import { WORKER_POOLS, type WorkerPool } from "@tjm/protocol";

export { WORKER_POOLS, type WorkerPool };

/** The portable codec intents a job can ask for that a GPU encodes (vp9 is software only). */
const SELF_TESTED_CODECS = ["h264", "hevc", "av1"] as const;
/** NVIDIA, Intel Quick Sync, AMD AMF, and VA-API (Linux's vendor-neutral interface to Intel and AMD). */
const SELF_TESTED_FAMILIES = ["nvenc", "qsv", "amf", "vaapi"] as const;
export type EncoderFamily = (typeof SELF_TESTED_FAMILIES)[number];

/** h264_nvenc, hevc_nvenc, av1_nvenc, h264_qsv, … av1_vaapi. */
export const SELF_TESTED_ENCODERS: readonly string[] = SELF_TESTED_FAMILIES.flatMap((family) =>
  SELF_TESTED_CODECS.map((codec) => `${codec}_${family}`),
);

export function encoderFamily(encoder: string): EncoderFamily | undefined {
  return SELF_TESTED_FAMILIES.find((family) => encoder.endsWith(`_${family}`));
}

/**
 * The self-tested encoders this ffmpeg lists. A listing proves only that the build knows
 * the encoder (Debian's lists NVENC, QSV and VA-API on a machine with no GPU), so each
 * one must pass a self-test before it is reported.
 */
export function listedHardwareEncoders(encoderNames: readonly string[]): string[] {
  const listed = new Set(encoderNames);
  return SELF_TESTED_ENCODERS.filter((name) => listed.has(name));
}

/**
 * What a pool cannot work without. Every pool encodes audio in software, so aac is required
 * everywhere; a GPU pool's H.264 encoder is what the legacy codec names and most jobs use.
 */
export const REQUIRED_ENCODERS: Record<WorkerPool, readonly string[]> = {
  cpu: ["libx264", "aac"],
  nvidia: ["h264_nvenc", "aac"],
  intel: ["h264_qsv", "aac"],
  amd: ["h264_amf", "aac"],
};

export type HardwareEncoderResult =
  | { name: string; status: "passed" }
  | { name: string; status: "failed"; reason: string };

export interface Certification {
  status: "READY" | "DEGRADED";
  /** Empty when READY; otherwise one sentence per required encoder that is missing or failed. */
  reasons: string[];
}

export function certify(
  pool: WorkerPool,
  listedEncoders: readonly string[],
  selfTests: readonly HardwareEncoderResult[],
): Certification {
  const listed = new Set(listedEncoders);
  const reasons = REQUIRED_ENCODERS[pool].flatMap((name) => {
    if (!listed.has(name)) return [`required encoder ${name} is not listed by ffmpeg -encoders`];
    if (encoderFamily(name) === undefined) return [];
    const result = selfTests.find((test) => test.name === name);
    if (result === undefined) return [`required encoder ${name} was not self-tested`];
    return result.status === "failed"
      ? [`required encoder ${name} failed its self-test: ${result.reason}`]
      : [];
  });
  return { status: reasons.length === 0 ? "READY" : "DEGRADED", reasons };
}

/**
 * Concurrent NVENC sessions a GeForce driver allows per system, across all its cards: 8
 * since the drivers of early 2024 (before: 3, then 5). Professional cards have no such
 * limit, but a host cannot tell which limit its driver enforces without opening sessions
 * until one fails, so 8 is the default; WORKER_CAPACITY lowers it on older drivers.
 */
export const NVENC_SESSION_LIMIT = 8;

/**
 * How many jobs a host runs at once, before the configured cap.
 * - cpu: one job per two cores. ffmpeg's software encoders already thread across every
 *   core, so more jobs only split the same cores finer; two cores per job keep the host
 *   busy through each job's single-threaded stages (demuxing, audio, upload).
 * - nvidia / intel / amd: one job per core. The GPU encodes, but each job still decodes,
 *   filters, encodes audio and muxes on the CPU, about a core's work. NVIDIA is further
 *   bounded by its session limit; QSV and AMF have none a host can read, so an operator
 *   who knows the GPU's throughput sets WORKER_CAPACITY.
 */
export function defaultCapacity(pool: WorkerPool, cores: number): number {
  const coreCount = Math.max(1, Math.floor(cores));
  switch (pool) {
    case "cpu":
      return Math.max(1, Math.floor(coreCount / 2));
    case "nvidia":
      return Math.min(NVENC_SESSION_LIMIT, coreCount);
    case "intel":
    case "amd":
      return coreCount;
  }
}

/** The default capacity, lowered to WORKER_CAPACITY when that is set; a cap never raises it. */
export function capacity(pool: WorkerPool, cores: number, capacityCap?: number): number {
  const byHost = defaultCapacity(pool, cores);
  return capacityCap === undefined ? byHost : Math.min(byHost, capacityCap);
}
