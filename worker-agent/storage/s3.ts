/**
 * The S3 client the Worker uses, and `s3://bucket/key` URIs. Every storage call goes through
 * our own retry loop (retry.ts), so the SDK's is switched off: one attempt per `send`, and a
 * dead endpoint surfaces as an error within the connection/socket timeouts instead of hanging.
 */
import { S3Client } from "@aws-sdk/client-s3";
import type { StorageSettings } from "@tjm/protocol";

export interface S3Location {
  bucket: string;
  key: string;
}

export interface S3ClientTimeouts {
  /** TCP connect. 5 s: S3 and a LAN MinIO answer in milliseconds; longer means unreachable. */
  connectionTimeoutMs?: number;
  /**
   * How long a socket may carry no bytes in either direction. 30 s: long enough for S3 to
   * assemble a large multipart object (it sends whitespace while it works), short enough that
   * a silently dropped connection is noticed.
   */
  socketTimeoutMs?: number;
}

export const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000;
export const DEFAULT_SOCKET_TIMEOUT_MS = 30_000;

export function createS3Client(settings: StorageSettings, timeouts: S3ClientTimeouts = {}): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    // WHEN_SUPPORTED streams bodies as aws-chunked, which s3rver stores verbatim and Swift
    // rejects; the settings say which one this store takes.
    requestChecksumCalculation: settings.checksums,
    responseChecksumValidation: settings.checksums,
    maxAttempts: 1,
    requestHandler: {
      connectionTimeout: timeouts.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
      socketTimeout: timeouts.socketTimeoutMs ?? DEFAULT_SOCKET_TIMEOUT_MS,
    },
  });
}

// The bucket rule of the protocol's s3Uri (S3's DNS-compatible names).
const S3_URI = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.+)$/s;

/** Splits `s3://bucket/key`. The key is taken literally (not percent-decoded), as the AWS CLI does. */
export function parseS3Uri(uri: string): S3Location {
  const match = S3_URI.exec(uri);
  if (!match?.[1] || !match[2]) throw new TypeError(`not an s3://bucket/key URI: ${JSON.stringify(uri)}`);
  return { bucket: match[1], key: match[2] };
}

export function formatS3Uri(location: S3Location): string {
  return `s3://${location.bucket}/${location.key}`;
}

/**
 * The x-amz-copy-source value: each key segment percent-encoded but the slashes kept, which
 * S3 accepts and which s3rver (it only runs decodeURI on the header) needs.
 */
export function copySource(location: S3Location): string {
  const key = location.key.split("/").map(encodeURIComponent).join("/");
  return `${location.bucket}/${key}`;
}
