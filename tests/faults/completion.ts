/**
 * What a protocol-level Worker does to finish a lease for real: it stores a small object at
 * each upload key the lease names (a staging key: these Managers commit by copy), then reports `completed` with its size and SHA-256, so the
 * Manager promotes it (copy to the destination, manifest) as it would an agent's outputs.
 */
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { LeaseCommand } from "@tjm/protocol";
import { sha256 } from "../harness/media-jobs.ts";
import type { ProtocolWorker } from "../harness/protocol-worker.ts";

export async function completeLease(
  worker: ProtocolWorker,
  lease: LeaseCommand,
  s3: S3Client,
): Promise<void> {
  const outputs = [];
  for (const staged of lease.uploads) {
    const body = new TextEncoder().encode(`output ${staged.outputId} of attempt ${lease.attemptId}`);
    const [bucket, ...key] = staged.uri.slice("s3://".length).split("/");
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key.join("/"), Body: body }));
    outputs.push({
      id: staged.outputId,
      uri: staged.uri,
      bytes: body.byteLength,
      sha256: await sha256(body),
      durationMs: 1000,
      codecs: ["h264", "aac"],
    });
  }
  await worker.report("completed", lease, { outputs, logsUri: lease.logsUri });
}
