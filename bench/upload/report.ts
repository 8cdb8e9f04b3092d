/** The upload scenario's table and target. */
import { count, met, ratio, table } from "../report.ts";
import { median } from "../shared/stats.ts";
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
  return `${title}\n\n${count(result.fileMiB)} MiB of random bytes from local disk to OpenStack Swift 2.30 s3api on loopback (started in ${result.swiftStartSeconds.toFixed(1)} s), one S3 client for both (checksums WHEN_REQUIRED, path style). Each cell is the median MiB/s, every run in brackets; the two contenders alternate who goes first. For each part the SDK computes the SHA-256 it signs, for both; the uploader also hashes the whole file (SHA-256, for the manifest) and rewrites its state file after every part.\n\n${table(["part size", "parts in flight", "uploader MiB/s", "lib-storage MiB/s", "ratio"], rows)}\n\n${promotionSection(result)}`;
}

function promotionSection(result: UploadResult): string {
  const title = "## Promotion: staging copy against multipart commit";
  const promotion = result.promotion;
  if (!promotion) return `${title}\n\nnot measured (BENCH_UPLOAD_PROMOTION_RUNS=0)`;
  const row = (path: string, runs: number[]) => [
    path,
    median(runs).toFixed(2),
    runs.map((seconds) => seconds.toFixed(2)).join(", "),
  ];
  const speedup = median(promotion.copyRuns) / median(promotion.commitRuns);
  return `${title}\n\nThe promoter's storage step for one ${count(result.fileMiB)} MiB output on the same Swift (32 MiB parts): copy = the output complete at its staging key, copied server-side to its destination with the size check (S3_COMMIT=copy); commit = its upload left incomplete at the destination, part list checked (ListParts), other uploads at the key listed, then CompleteMultipartUpload (S3_COMMIT=multipart). The rest of completed → COMPLETED (two short transactions, the manifest PUT) is the same on both paths. Runs alternate which path goes first; the upload before each is not timed.\n\n${table(["path", "median s", "runs (s)"], [row("copy", promotion.copyRuns), row("multipart commit", promotion.commitRuns)])}\n\nCommit is ${ratio(speedup)} faster than the copy (median against median).`;
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
