/**
 * The Manager's few object-storage operations: promoting a finished attempt's staged outputs
 * to their destinations (a server-side copy), writing the manifest, removing staging objects.
 */
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import type { StorageSettings } from "@tjm/protocol";
import { parseS3Uri } from "../jobs/index.ts";

/** CopyObject copies at most 5 GiB; larger objects are copied in parts. */
const SINGLE_COPY_MAX_BYTES = 5 * 1024 ** 3;
const COPY_PART_BYTES = 512 * 1024 ** 2;

export function createStorageClient(settings: StorageSettings): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    forcePathStyle: settings.forcePathStyle,
    requestChecksumCalculation: settings.checksums,
    responseChecksumValidation: settings.checksums,
  });
}

/** The bucket and key of a location the Manager stored or derived (so already valid). */
export function splitS3Uri(uri: string): { bucket: string; key: string } {
  const parsed = parseS3Uri(uri);
  if (!parsed.ok) throw new Error(`${uri}: ${parsed.problem}`);
  return parsed.location;
}

/** S3 wants the copy source URL-encoded, slashes kept. */
const copySource = (from: { bucket: string; key: string }) =>
  `${from.bucket}/${from.key.split("/").map(encodeURIComponent).join("/")}`;

export async function copyObject(
  client: S3Client,
  fromUri: string,
  toUri: string,
  bytes: number,
): Promise<void> {
  const from = splitS3Uri(fromUri);
  const to = splitS3Uri(toUri);
  if (bytes <= SINGLE_COPY_MAX_BYTES) {
    await client.send(
      new CopyObjectCommand({ Bucket: to.bucket, Key: to.key, CopySource: copySource(from) }),
    );
    return;
  }
  const { UploadId } = await client.send(
    new CreateMultipartUploadCommand({ Bucket: to.bucket, Key: to.key }),
  );
  const parts: { PartNumber: number; ETag: string | undefined }[] = [];
  for (let start = 0, part = 1; start < bytes; start += COPY_PART_BYTES, part++) {
    const end = Math.min(start + COPY_PART_BYTES, bytes) - 1;
    const copied = await client.send(
      new UploadPartCopyCommand({
        Bucket: to.bucket,
        Key: to.key,
        UploadId,
        PartNumber: part,
        CopySource: copySource(from),
        CopySourceRange: `bytes=${start}-${end}`,
      }),
    );
    parts.push({ PartNumber: part, ETag: copied.CopyPartResult?.ETag });
  }
  await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: to.bucket,
      Key: to.key,
      UploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
}

export async function putJson(client: S3Client, uri: string, value: unknown): Promise<void> {
  const { bucket, key } = splitS3Uri(uri);
  await client.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: JSON.stringify(value, null, 2),
      ContentType: "application/json",
    }),
  );
}

export async function deleteObject(client: S3Client, uri: string): Promise<void> {
  const { bucket, key } = splitS3Uri(uri);
  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}
