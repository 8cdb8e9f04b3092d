/**
 * What a failed storage request means for the caller, decided from the error alone (pure):
 * worth retrying, refused for good, or something missing. The SDK reports service errors
 * by `name` (the S3 error code) and `$metadata.httpStatusCode`; Node reports network
 * failures by `code`; the SDK's HTTP handler reports its own timeouts as `TimeoutError`.
 */
import { parseS3Uri } from "./uri.ts";

export type StorageErrorKind =
  | "recoverable"
  | "access-denied"
  | "no-such-bucket"
  | "no-such-key"
  /** The multipart upload id is unknown: aborted, expired by a lifecycle rule, or completed. */
  | "no-such-upload"
  | "fatal";

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  // DNS: a resolver hiccup (EAI_AGAIN) or a name that does not resolve right now. A mistyped
  // endpoint also lands here; it ends as StorageUnavailableError naming the host.
  "EAI_AGAIN",
  "ENOTFOUND",
  // The response body stopped before its end.
  "ERR_STREAM_PREMATURE_CLOSE",
  // (Bun 1.4's node:http reports refused, reset and timed-out connections with the same
  // codes and names as Node; checked by hand.)
]);

const RECOVERABLE_NAMES = new Set([
  // The SDK's HTTP handler: connect timeout, socket idle timeout.
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
  "SlowDown",
  "Throttling",
  "ThrottlingException",
  "RequestThrottled",
  "TooManyRequestsException",
  "InternalError",
  "ServiceUnavailable",
  // The SDK corrects its clock offset from this answer, so the next attempt is signed right.
  "RequestTimeTooSkewed",
  // The server got a different or shorter body than we sent: damaged in transit.
  "BadDigest",
  "XAmzContentSHA256Mismatch",
  "IncompleteBody",
]);

const ACCESS_DENIED_NAMES = new Set([
  "AccessDenied",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "ExpiredToken",
  "InvalidToken",
  "TokenRefreshRequired",
  "AllAccessDisabled",
  "AccountProblem",
]);

interface ErrorFields {
  name?: unknown;
  code?: unknown;
  Code?: unknown;
  cause?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

function fields(error: unknown): ErrorFields | undefined {
  return typeof error === "object" && error !== null ? (error as ErrorFields) : undefined;
}

function classifyOne(error: ErrorFields): StorageErrorKind | undefined {
  const name = typeof error.Code === "string" ? error.Code : error.name;
  if (typeof name === "string") {
    if (name === "NoSuchBucket") return "no-such-bucket";
    if (name === "NoSuchKey" || name === "NotFound") return "no-such-key";
    if (name === "NoSuchUpload") return "no-such-upload";
    if (ACCESS_DENIED_NAMES.has(name)) return "access-denied";
    if (RECOVERABLE_NAMES.has(name)) return "recoverable";
    // A server that does not implement an operation will not start to on a retry.
    if (name === "NotImplemented") return "fatal";
  }
  if (typeof error.code === "string" && NETWORK_CODES.has(error.code)) return "recoverable";
  const status = error.$metadata?.httpStatusCode;
  if (typeof status === "number") {
    if (status === 401 || status === 403) return "access-denied";
    if (status === 408 || status === 429) return "recoverable";
    if (status >= 500 && status <= 599 && status !== 501) return "recoverable";
    return "fatal";
  }
  return undefined;
}

export function classifyStorageError(error: unknown): StorageErrorKind {
  // Follow `cause` a few levels: wrappers (ours, or a stream's) keep the network error there.
  let current = fields(error);
  for (let depth = 0; current && depth < 5; depth++) {
    const kind = classifyOne(current);
    if (kind) return kind;
    current = fields(current.cause);
  }
  return "fatal";
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as ErrorFields).code;
    return typeof code === "string" && !error.message.includes(code)
      ? `${error.name} ${code}: ${error.message}`
      : `${error.name}: ${error.message}`;
  }
  return String(error);
}

function bucketOf(uri: string): string {
  const parsed = parseS3Uri(uri);
  return parsed.ok ? parsed.location.bucket : uri;
}

/** Recoverable failures outlasted the retry budget; state kept for a later resume. */
export class StorageUnavailableError extends Error {
  override readonly name = "StorageUnavailableError";
  constructor(
    readonly operation: string,
    readonly uri: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`${operation} ${uri}: storage unavailable after ${attempts} attempt(s): ${describe(cause)}`, {
      cause,
    });
  }
}

/** The store answered and said no: credentials, policy, or a bucket that does not exist. */
export class StorageRefusedError extends Error {
  override readonly name = "StorageRefusedError";
  constructor(
    readonly operation: string,
    readonly uri: string,
    readonly reason: "access-denied" | "no-such-bucket",
    cause: unknown,
  ) {
    const bucket = bucketOf(uri);
    super(
      reason === "no-such-bucket"
        ? `${operation} ${uri}: bucket "${bucket}" does not exist`
        : `${operation} ${uri}: access denied to bucket "${bucket}" (${describe(cause)}); check the storage credentials and the bucket policy`,
      { cause },
    );
  }
}

export class InputNotFoundError extends Error {
  override readonly name = "InputNotFoundError";
  constructor(
    readonly uri: string,
    cause?: unknown,
  ) {
    super(`no object at ${uri}`, { cause });
  }
}

/** Anything else the store or the SDK rejected; not worth retrying. */
export class StorageFailedError extends Error {
  override readonly name = "StorageFailedError";
  constructor(
    readonly operation: string,
    readonly uri: string,
    cause: unknown,
  ) {
    super(`${operation} ${uri} failed: ${describe(cause)}`, { cause });
  }
}

/**
 * Turns an error from a storage call into one of the errors above. Ours pass through, and so
 * do errors that did not come from the store (a local file that cannot be read, a cancel).
 */
export function toStorageError(
  error: unknown,
  operation: string,
  uri: string,
  signal?: AbortSignal,
): unknown {
  if (signal?.aborted) return signal.reason;
  if (
    error instanceof StorageUnavailableError ||
    error instanceof StorageRefusedError ||
    error instanceof InputNotFoundError ||
    error instanceof StorageFailedError
  ) {
    return error;
  }
  const kind = classifyStorageError(error);
  switch (kind) {
    case "access-denied":
    case "no-such-bucket":
      return new StorageRefusedError(operation, uri, kind, error);
    case "no-such-key":
      return new InputNotFoundError(uri, error);
    case "recoverable":
      return new StorageUnavailableError(operation, uri, 1, error);
    case "no-such-upload":
      return new StorageFailedError(operation, uri, error);
    case "fatal":
      return fields(error)?.$metadata ? new StorageFailedError(operation, uri, error) : error;
  }
}
