/**
 * The S3 client Manager and Worker use. Every storage call goes through our own retry loop
 * (retry.ts), so the SDK's is switched off: one attempt per `send`, and a dead endpoint
 * surfaces as an error within the connection/socket timeouts instead of hanging.
 */
import { S3Client } from "@aws-sdk/client-s3";
import { FetchHttpHandler } from "@smithy/fetch-http-handler";

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

/**
 * How requests travel. "node" (node:http) for everything by default: its socket timeout notices
 * a connection that stops carrying bytes. "fetch" is for requests whose body is in memory (a
 * PutObject, an UploadPart) from a Bun process: Bun's node:http sent a 20 MiB body with 91 ms
 * of CPU against 36 ms for its fetch, hashing included, and took 192 ms against 136 ms to
 * s3rver (medians of 12). fetch has no socket timeout, so each request gets a deadline
 * instead: the connection and socket timeouts plus its body at FETCH_FLOOR_BYTES_PER_SECOND.
 */
export type S3Transport = "node" | "fetch";

/** 256 KiB/s: a 32 MiB part may take 2 minutes beyond the timeouts before it counts as stalled. */
export const FETCH_FLOOR_BYTES_PER_SECOND = 256 * 1024;

/** A request's deadline under the "fetch" transport, from the length of its body. */
export function fetchDeadlineMs(bodyBytes: number, timeouts: S3ClientTimeouts = {}): number {
  return (
    (timeouts.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS) +
    (timeouts.socketTimeoutMs ?? DEFAULT_SOCKET_TIMEOUT_MS) +
    Math.ceil((bodyBytes * 1000) / FETCH_FLOOR_BYTES_PER_SECOND)
  );
}

function fetchHandler(timeouts: S3ClientTimeouts): FetchHttpHandler {
  return new FetchHttpHandler({
    keepAlive: true,
    // The handler's own requestTimeout only stops waiting; this deadline aborts the request.
    customFetch: (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const bodyBytes = Number(request.headers.get("content-length") ?? 0) || 0;
      const deadline = AbortSignal.timeout(fetchDeadlineMs(bodyBytes, timeouts));
      return fetch(request, { signal: AbortSignal.any([request.signal, deadline]) });
    },
  });
}

export function createS3Client(
  settings: StorageSettings,
  timeouts: S3ClientTimeouts = {},
  transport: S3Transport = "node",
): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    requestChecksumCalculation: settings.checksums,
    responseChecksumValidation: settings.checksums,
    maxAttempts: 1,
    requestHandler:
      transport === "fetch"
        ? fetchHandler(timeouts)
        : {
            connectionTimeout: timeouts.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
            socketTimeout: timeouts.socketTimeoutMs ?? DEFAULT_SOCKET_TIMEOUT_MS,
          },
  });
}
