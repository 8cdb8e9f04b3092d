/**
 * Presigned GET URLs: anyone holding one reads the object, with Range requests, until it
 * expires, without credentials of their own. The URL's query string is a credential.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { splitS3Uri } from "./uri.ts";

/** SigV4's limit on a presigned URL's lifetime: 7 days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export function presignGet(client: S3Client, uri: string, expiresInSeconds: number): Promise<string> {
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_PRESIGN_SECONDS) {
    throw new RangeError(`a presigned URL lives 1 s to 7 days, got ${expiresInSeconds} s`);
  }
  const { bucket, key } = splitS3Uri(uri);
  return getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: key }), {
    expiresIn: expiresInSeconds,
  });
}

/** What a presigned PUT binds: the object's content type and its exact length in bytes. */
export interface PresignedPutTerms {
  contentType: string;
  contentLength: number;
}

/**
 * A presigned PUT whose signature covers Content-Type and Content-Length (both in
 * X-Amz-SignedHeaders): the store refuses a body of another type or length, so the URL cannot
 * carry anything but what was asked for. The uploader must send exactly these two headers.
 */
export function presignPut(
  client: S3Client,
  uri: string,
  terms: PresignedPutTerms,
  expiresInSeconds: number,
): Promise<string> {
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_PRESIGN_SECONDS) {
    throw new RangeError(`a presigned URL lives 1 s to 7 days, got ${expiresInSeconds} s`);
  }
  if (!Number.isInteger(terms.contentLength) || terms.contentLength < 0) {
    throw new RangeError(`a content length is a whole number of bytes, got ${terms.contentLength}`);
  }
  const { bucket, key } = splitS3Uri(uri);
  return getSignedUrl(
    client,
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      ContentType: terms.contentType,
      ContentLength: terms.contentLength,
    }),
    { expiresIn: expiresInSeconds, signableHeaders: new Set(["content-type", "content-length"]) },
  );
}
