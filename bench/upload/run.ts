/**
 * Upload throughput: one large file (1 GiB by default) to a real S3 implementation (OpenStack
 * Swift's s3api on loopback, devstack/src/swift) through the Worker's MultipartUploader and
 * through a plain @aws-sdk/lib-storage Upload, with the same S3 client settings, part size and
 * parts in flight. Each configuration runs the two in adjacent pairs (ours first, then theirs
 * first, and so on) and reports medians, so drifting background load skews both alike.
 *
 * The uploader does more than lib-storage for each byte: a SHA-256 of the whole file (the
 * manifest's checksum) and a state-file write after every part, on this process's CPU, which
 * Swift's Python servers share on this machine. Both sign each part's SHA-256 (the SDK does).
 * Then the promotion of that file, copy against multipart commit (promotion.ts).
 */
import { randomFillSync } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { DeleteObjectCommand, ListMultipartUploadsCommand, type S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { startSwift, swiftInstalled } from "@tjm/devstack/swift";
import { createS3Client } from "@tjm/storage";
import { DEFAULT_PART_SIZE, MIB } from "../../worker-agent/src/storage/parts.ts";
import { DEFAULT_UPLOAD_CONCURRENCY, MultipartUploader } from "../../worker-agent/src/storage/upload.ts";
import type { BenchContext } from "../scenario.ts";
import { median } from "../shared/stats.ts";
import { measurePromotion, type PromotionMeasurement } from "./promotion.ts";

const BUCKET = "bench-upload";
const WRITE_CHUNK = 16 * MIB;

export interface UploadMeasurement {
  partSizeMiB: number;
  concurrency: number;
  /** Median MiB/s of each contender. */
  uploaderMiBps: number;
  libStorageMiBps: number;
  /** Every run's MiB/s, in the order they ran. */
  uploaderRuns: number[];
  libStorageRuns: number[];
  /** The Worker's defaults (DEFAULT_PART_SIZE, DEFAULT_UPLOAD_CONCURRENCY). */
  isDefault: boolean;
}

export interface UploadResult {
  fileMiB: number;
  swiftStartSeconds: number;
  measurements: UploadMeasurement[];
  /** Undefined when BENCH_UPLOAD_PROMOTION_RUNS is 0. */
  promotion: PromotionMeasurement | undefined;
}

/** Random bytes, so nothing between here and the disk can compress them. */
async function writeRandomFile(path: string, bytes: number): Promise<void> {
  const handle = await open(path, "w");
  try {
    for (let written = 0; written < bytes; written += WRITE_CHUNK) {
      const length = Math.min(WRITE_CHUNK, bytes - written);
      await handle.write(randomFillSync(Buffer.allocUnsafe(length)));
    }
  } finally {
    await handle.close();
  }
}

/** Seconds one upload took; the object is deleted afterwards so the store does not grow. */
async function timed(client: S3Client, key: string, upload: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await upload();
  const seconds = (performance.now() - started) / 1000;
  await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
  return seconds;
}

export async function benchUpload(context: BenchContext): Promise<UploadResult> {
  const settings = context.settings.upload;
  if (!swiftInstalled()) {
    throw new Error(
      "the upload bench needs OpenStack Swift: apt-get install --no-install-recommends swift swift-proxy swift-account swift-container swift-object python3-swift python3-lxml python3-requests attr",
    );
  }
  const startedSwift = performance.now();
  const swift = await startSwift();
  context.cleanup.defer("stop Swift", () => swift.stop());
  const swiftStartSeconds = (performance.now() - startedSwift) / 1000;
  await swift.createBucket(BUCKET);
  const directory = await mkdtemp(join(tmpdir(), "tjm-bench-upload-"));
  context.cleanup.defer("remove the upload bench's file", () =>
    rm(directory, { recursive: true, force: true }),
  );
  const file = join(directory, "upload.bin");
  const bytes = settings.fileMiB * MIB;
  context.log(`upload: writing ${settings.fileMiB} MiB of random bytes`);
  await writeRandomFile(file, bytes);
  const client = createS3Client(swift.settings);
  context.cleanup.defer("close the upload bench's S3 client", async () => client.destroy());

  const ours = (partSize: number, concurrency: number, run: string) => {
    const key = `ours/${run}`;
    return timed(client, key, () =>
      new MultipartUploader({
        client,
        file,
        uri: `s3://${BUCKET}/${key}`,
        statePath: join(directory, `${run}.state.json`),
        partSize,
        concurrency,
      }).upload(),
    );
  };
  const theirs = (partSize: number, concurrency: number, run: string) => {
    const key = `lib-storage/${run}`;
    return timed(client, key, () =>
      new Upload({
        client,
        params: { Bucket: BUCKET, Key: key, Body: createReadStream(file) },
        partSize,
        queueSize: concurrency,
      }).done(),
    );
  };

  const measurements: UploadMeasurement[] = [];
  for (const partSizeMiB of settings.partSizesMiB) {
    for (const concurrency of settings.concurrencies) {
      const partSize = partSizeMiB * MIB;
      const uploaderRuns: number[] = [];
      const libStorageRuns: number[] = [];
      for (let run = 0; run < settings.runs; run++) {
        const name = `${partSizeMiB}-${concurrency}-${run}`;
        const pair: [number[], () => Promise<number>][] = [
          [uploaderRuns, () => ours(partSize, concurrency, name)],
          [libStorageRuns, () => theirs(partSize, concurrency, name)],
        ];
        if (run % 2 === 1) pair.reverse();
        for (const [runs, measure] of pair) runs.push(settings.fileMiB / (await measure()));
      }
      const measurement: UploadMeasurement = {
        partSizeMiB,
        concurrency,
        uploaderMiBps: median(uploaderRuns),
        libStorageMiBps: median(libStorageRuns),
        uploaderRuns,
        libStorageRuns,
        isDefault: partSize === DEFAULT_PART_SIZE && concurrency === DEFAULT_UPLOAD_CONCURRENCY,
      };
      context.log(
        `upload ${partSizeMiB} MiB x ${concurrency}: uploader ${measurement.uploaderMiBps.toFixed(0)} MiB/s, lib-storage ${measurement.libStorageMiBps.toFixed(0)} MiB/s`,
      );
      measurements.push(measurement);
    }
  }
  const leftovers = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
  if ((leftovers.Uploads ?? []).length > 0) {
    throw new Error(`${leftovers.Uploads?.length} multipart uploads were left incomplete`);
  }
  const promotion =
    settings.promotionRuns > 0
      ? await measurePromotion(
          { client, bucket: BUCKET, file, directory, log: context.log },
          settings.promotionRuns,
        )
      : undefined;
  const left = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
  if ((left.Uploads ?? []).length > 0) {
    throw new Error(`${left.Uploads?.length} multipart uploads were left incomplete by the promotion runs`);
  }
  return { fileMiB: settings.fileMiB, swiftStartSeconds, measurements, promotion };
}
