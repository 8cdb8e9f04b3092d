/** The Worker's storage layer: what the rest of the agent imports. */
export { type CopyOptions, type CopyResult, copyObject } from "./copy.ts";
export { type DownloadOptions, type DownloadResult, downloadObject } from "./download.ts";
export {
  classifyStorageError,
  InputNotFoundError,
  type StorageErrorKind,
  StorageFailedError,
  StorageRefusedError,
  StorageUnavailableError,
} from "./errors.ts";
export { deletePrefix, putSmallObject } from "./objects.ts";
export { DEFAULT_PART_SIZE, MIN_PART_SIZE } from "./parts.ts";
export { DEFAULT_RETRY, type RetryClock, type RetryOptions, type RetryPolicy } from "./retry.ts";
export { createS3Client, formatS3Uri, parseS3Uri, type S3ClientTimeouts, type S3Location } from "./s3.ts";
export {
  DEFAULT_UPLOAD_CONCURRENCY,
  MultipartUploader,
  type UploadOptions,
  type UploadProgress,
  type UploadResult,
} from "./upload.ts";
