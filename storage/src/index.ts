/**
 * The one S3 module of Manager and Worker: the client from the storage settings, `s3://`
 * locations, error classification and the retry loop every call goes through, server-side copy
 * (ETag-pinned, multipart above 5 GiB, aborted on failure), the commit of a multipart upload
 * reported at its destination, put, delete and presigned GETs.
 * It imports nothing from the protocol, the Manager or the Worker agent.
 */
export { createS3Client, type S3Transport, type StorageSettings } from "./client.ts";
export {
  abortMultipartUpload,
  CommitMismatchError,
  type CommitResult,
  commitMultipartUpload,
  type ReportedPart,
  type ReportedUpload,
} from "./commit.ts";
export { CopyMismatchError, copyObject } from "./copy.ts";
export {
  classifyStorageError,
  InputNotFoundError,
  StorageFailedError,
  StorageRefusedError,
  StorageUnavailableError,
  toStorageError,
} from "./errors.ts";
export {
  deleteObject,
  deletePrefix,
  type ObjectTail,
  ObjectTooLargeError,
  putSmallObject,
  readObjectTail,
  readSmallObject,
} from "./objects.ts";
export { GIB, MAX_PARTS, MIB, multipartEtag, type PartRange, planParts } from "./parts.ts";
export { type PresignedPutTerms, presignGet, presignPut } from "./presign.ts";
export {
  DEFAULT_RETRY,
  type RetryContext,
  type RetryOptions,
  type RetryPolicy,
  retryContext,
  withRetry,
} from "./retry.ts";
export { runBounded } from "./run-bounded.ts";
export { formatS3Uri, parseS3Uri, type S3Location, splitS3Uri } from "./uri.ts";
