/** What the attempt code (src/attempts) imports from the storage layer. */
export { downloadObject } from "./download.ts";
export {
  InputNotFoundError,
  StorageFailedError,
  StorageRefusedError,
  StorageUnavailableError,
} from "./errors.ts";
export { putSmallObject } from "./objects.ts";
export type { RetryPolicy } from "./retry.ts";
export { createS3Client } from "./s3.ts";
export { MultipartUploader } from "./upload.ts";
