/** The upload scenario's table and target. */
import { count, met, ratio, table } from "../report.ts";
import type { UploadResult } from "./run.ts";

const TARGETS = {
  /** The Worker's uploader over a plain lib-storage Upload of the same file, at its defaults. */
  uploadRatio: 0.9,
};

export function uploadReport(result: UploadResult | undefined): string {
  const title = "## Upload: the Worker's uploader against lib-storage";
  if (!result) return `${title}\n\nnot measured`;
  const rows = result.measurements.map((m) => [
    `${m.partSizeMiB} MiB${m.isDefault ? " (default)" : ""}`,
    String(m.concurrency),
    `${m.uploaderMiBps.toFixed(0)} (${m.uploaderRuns.map((v) => v.toFixed(0)).join(", ")})`,
    `${m.libStorageMiBps.toFixed(0)} (${m.libStorageRuns.map((v) => v.toFixed(0)).join(", ")})`,
    ratio(m.uploaderMiBps / m.libStorageMiBps),
  ]);
  return `${title}\n\n${count(result.fileMiB)} MiB of random bytes from local disk to OpenStack Swift 2.30 s3api on loopback (started in ${result.swiftStartSeconds.toFixed(1)} s), one S3 client for both (checksums WHEN_REQUIRED, path style). Each cell is the median MiB/s, every run in brackets; the two contenders alternate who goes first. For each part the SDK computes the SHA-256 it signs, for both; the uploader also hashes the whole file (SHA-256, for the manifest) and rewrites its state file after every part.\n\n${table(["part size", "parts in flight", "uploader MiB/s", "lib-storage MiB/s", "ratio"], rows)}`;
}

export function uploadTargets(result: UploadResult | undefined): string[][] {
  const chosen = result?.measurements.find((m) => m.isDefault);
  const value = chosen ? chosen.uploaderMiBps / chosen.libStorageMiBps : Number.NaN;
  return [
    [
      `uploader >= ${TARGETS.uploadRatio.toFixed(1)}x lib-storage at the Worker's defaults`,
      chosen
        ? `${ratio(value)} (${chosen.uploaderMiBps.toFixed(0)} vs ${chosen.libStorageMiBps.toFixed(0)} MiB/s)`
        : "n/a (defaults not among the configurations run)",
      met(chosen ? value >= TARGETS.uploadRatio : undefined),
    ],
  ];
}
