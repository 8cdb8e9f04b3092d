import { positiveInteger, positiveNumbers } from "../shared/env.ts";

export interface UploadSettings {
  /** Size of the file uploaded, in MiB. */
  fileMiB: number;
  /** Part sizes tried, in MiB. */
  partSizesMiB: number[];
  /** Parts in flight tried. */
  concurrencies: number[];
  /** Pairs (ours, lib-storage) per configuration; medians are reported. */
  runs: number;
  /** Pairs (copy, multipart commit) of the promotion step; 0 skips it. */
  promotionRuns: number;
}

export function readUploadSettings(env: NodeJS.ProcessEnv): UploadSettings {
  return {
    fileMiB: positiveInteger(env, "BENCH_UPLOAD_MIB", "1024"),
    partSizesMiB: positiveNumbers(env, "BENCH_UPLOAD_PART_SIZES_MIB", "8,16,32,64").map(Math.round),
    concurrencies: positiveNumbers(env, "BENCH_UPLOAD_CONCURRENCY", "2,4,8").map(Math.round),
    runs: positiveInteger(env, "BENCH_UPLOAD_RUNS", "2"),
    promotionRuns:
      env.BENCH_UPLOAD_PROMOTION_RUNS === "0" ? 0 : positiveInteger(env, "BENCH_UPLOAD_PROMOTION_RUNS", "3"),
  };
}
