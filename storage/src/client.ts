/**
 * The S3 client Manager and Worker use. Every storage call goes through our own retry loop
 * (retry.ts), so the SDK's is switched off: one attempt per `send`, and a dead endpoint
 * surfaces as an error within the connection/socket timeouts instead of hanging.
 */
import { S3Client } from "@aws-sdk/client-s3";

/**
 * Where and how to reach the store: the Manager's S3_* configuration, handed to Workers in
 * each lease (the protocol's StorageSettingsSchema is checked against this type).
 */
export interface StorageSettings {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Path-style URLs (`http://host/bucket/key`): MinIO, Swift s3api and s3rver need them. */
  forcePathStyle: boolean;
  /**
   * The SDK's requestChecksumCalculation and responseChecksumValidation. WHEN_SUPPORTED
   * streams bodies as aws-chunked, which s3rver stores verbatim and Swift rejects.
   */
  checksums: "WHEN_REQUIRED" | "WHEN_SUPPORTED";
  /**
   * Parts the store accepts in one multipart upload: S3 10,000 (also when unset), Swift's
   * s3api 1,000 (its max_upload_part_num). Workers size their parts to fit.
   */
  maxParts?: number;
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
    requestChecksumCalculation: settings.checksums,
    responseChecksumValidation: settings.checksums,
    maxAttempts: 1,
    requestHandler: {
      connectionTimeout: timeouts.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
      socketTimeout: timeouts.socketTimeoutMs ?? DEFAULT_SOCKET_TIMEOUT_MS,
    },
  });
}
