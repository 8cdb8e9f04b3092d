/** What the attempt code (attempts/) imports from the storage layer. */
export {
  createS3Client,
  InputNotFoundError,
  putSmallObject,
  type RetryPolicy,
  StorageFailedError,
  StorageRefusedError,
  StorageUnavailableError,
} from "@tjm/storage";
export { downloadObject } from "./download.ts";
export { InputRelay, type RelayProblem } from "./input-relay.ts";
export { type IncompleteUpload, MultipartUploader } from "./upload.ts";
