/**
 * The promoter's storage step for one large output on Swift, the two ways a lease can name
 * (S3_COMMIT): copy, the output complete at its staging key and copied server-side to its
 * destination (copyObject with the size check, as manager/src/execution/promoter.ts calls it);
 * multipart, the output's upload left incomplete at its destination and completed with the
 * reported part list (commitMultipartUpload). Each run first uploads the file with the
 * Worker's uploader the way that path's Worker would (untimed), then times the step. It is what
 * lies between the Manager applying `completed` and COMPLETED besides two short transactions
 * and the manifest PUT, which both paths share. Runs alternate which path goes first.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { DeleteObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { commitMultipartUpload, copyObject, splitS3Uri } from "@tjm/storage";
import { MultipartUploader } from "../../worker-agent/src/storage/upload.ts";

export interface PromotionMeasurement {
  /** Seconds of each run, in the order they ran. */
  copyRuns: number[];
  commitRuns: number[];
}

interface PromotionTarget {
  client: S3Client;
  bucket: string;
  file: string;
  /** For the uploader's state files. */
  directory: string;
  log: (line: string) => void;
}

async function timed(step: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await step();
  return (performance.now() - started) / 1000;
}

async function remove(client: S3Client, uri: string): Promise<void> {
  const { bucket, key } = splitS3Uri(uri);
  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

function uploader(target: PromotionTarget, uri: string, name: string, complete: boolean) {
  return new MultipartUploader({
    client: target.client,
    file: target.file,
    uri,
    statePath: join(target.directory, `${name}.state.json`),
    complete,
  });
}

/** Copy path: uploaded to a staging key, then copied to the destination. */
async function copyRun(target: PromotionTarget, run: number): Promise<number> {
  const staging = `s3://${target.bucket}/.tjm-staging/promotion-${run}/out`;
  const destination = `s3://${target.bucket}/promotion/copy-${run}.bin`;
  const uploaded = await uploader(target, staging, `copy-${run}`, true).upload();
  const seconds = await timed(() =>
    copyObject(target.client, staging, destination, { expectedBytes: uploaded.bytes }),
  );
  await remove(target.client, staging);
  await remove(target.client, destination);
  return seconds;
}

/** Commit path: uploaded at the destination and left incomplete, then completed. */
async function commitRun(target: PromotionTarget, run: number): Promise<number> {
  const destination = `s3://${target.bucket}/promotion/commit-${run}.bin`;
  const uploaded = await uploader(target, destination, `commit-${run}`, false).upload();
  if (!uploaded.incomplete) throw new Error("the uploader completed an upload it was told to leave");
  const { incomplete } = uploaded;
  const seconds = await timed(() =>
    commitMultipartUpload(target.client, { uri: destination, bytes: uploaded.bytes, ...incomplete }),
  );
  await remove(target.client, destination);
  return seconds;
}

export async function measurePromotion(target: PromotionTarget, runs: number): Promise<PromotionMeasurement> {
  const measurement: PromotionMeasurement = { copyRuns: [], commitRuns: [] };
  for (let run = 0; run < runs; run++) {
    const pair: [number[], () => Promise<number>][] = [
      [measurement.copyRuns, () => copyRun(target, run)],
      [measurement.commitRuns, () => commitRun(target, run)],
    ];
    if (run % 2 === 1) pair.reverse();
    for (const [seconds, measure] of pair) seconds.push(await measure());
    target.log(
      `upload: promotion run ${run + 1}: copy ${measurement.copyRuns.at(-1)?.toFixed(2)} s, commit ${measurement.commitRuns.at(-1)?.toFixed(2)} s`,
    );
  }
  return measurement;
}
