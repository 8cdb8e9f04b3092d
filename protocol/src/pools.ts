/**
 * Worker pools and the rule tying a capability name to one. The Manager derives a job's pool
 * with it and the Worker decides which of its capabilities need proven hardware, so both
 * sides read names the same way.
 */

export const WORKER_POOLS = ["cpu", "nvidia", "intel", "amd"] as const;
export type WorkerPool = (typeof WORKER_POOLS)[number];

/** nvenc/cuda/cuvid/nvdec/npp -> nvidia, qsv -> intel, amf -> amd; undefined: any host can provide it. */
export function poolOfCapability(capability: string): Exclude<WorkerPool, "cpu"> | undefined {
  const name = capability.toLowerCase();
  if (/nvenc|cuda|cuvid|nvdec|npp/.test(name)) return "nvidia";
  if (/qsv/.test(name)) return "intel";
  if (/amf/.test(name)) return "amd";
  return undefined;
}
