import { NoSuchBucket, NoSuchKey, NoSuchUpload, NotFound, S3ServiceException } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import {
  classifyStorageError,
  InputNotFoundError,
  type StorageErrorKind,
  StorageFailedError,
  StorageRefusedError,
  StorageUnavailableError,
  toStorageError,
} from "./errors.ts";

const metadata = (httpStatusCode: number) => ({ httpStatusCode, attempts: 1, totalRetryDelay: 0 });

/** What the SDK throws for an S3 error answer: the error code as `name`, the status in $metadata. */
function serviceError(name: string, httpStatusCode: number, message = name): S3ServiceException {
  return new S3ServiceException({
    name,
    $fault: httpStatusCode >= 500 ? "server" : "client",
    $metadata: metadata(httpStatusCode),
    message,
  });
}

/** What Node's net/http throws: an Error with `code`, `errno`, `syscall`. */
function networkError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, errno: -1, syscall: "connect" });
}

/** The SDK's HTTP handler renames ECONNRESET/EPIPE/ETIMEDOUT errors to TimeoutError. */
function handlerRenamed(code: string, message: string): Error {
  return Object.assign(networkError(code, message), { name: "TimeoutError" });
}

/** Its own timeouts: a TimeoutError without a code. */
function handlerTimeout(message: string): Error {
  return Object.assign(new Error(message), { name: "TimeoutError" });
}

const cases: [string, unknown, StorageErrorKind][] = [
  ["connection refused", networkError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:9"), "recoverable"],
  [
    "connection reset (renamed by the handler)",
    handlerRenamed("ECONNRESET", "socket hang up"),
    "recoverable",
  ],
  ["broken pipe while sending a part", handlerRenamed("EPIPE", "write EPIPE"), "recoverable"],
  ["ETIMEDOUT", handlerRenamed("ETIMEDOUT", "connect ETIMEDOUT 10.0.0.1:443"), "recoverable"],
  ["DNS lookup failed", networkError("ENOTFOUND", "getaddrinfo ENOTFOUND s3.example"), "recoverable"],
  ["DNS try again", networkError("EAI_AGAIN", "getaddrinfo EAI_AGAIN s3.example"), "recoverable"],
  ["host unreachable", networkError("EHOSTUNREACH", "connect EHOSTUNREACH 10.0.0.1:443"), "recoverable"],
  ["body cut short", networkError("ERR_STREAM_PREMATURE_CLOSE", "Premature close"), "recoverable"],
  [
    "connection timeout",
    handlerTimeout("the request socket did not establish a connection with the server within 5000 ms."),
    "recoverable",
  ],
  [
    "socket idle timeout",
    handlerTimeout("the request socket timed out after 30000 ms of inactivity"),
    "recoverable",
  ],
  [
    "a network error kept as a cause",
    new Error("wrapped", { cause: networkError("ECONNRESET", "x") }),
    "recoverable",
  ],
  ["500 InternalError", serviceError("InternalError", 500), "recoverable"],
  ["503 SlowDown", serviceError("SlowDown", 503), "recoverable"],
  ["503 ServiceUnavailable", serviceError("ServiceUnavailable", 503), "recoverable"],
  ["400 RequestTimeout", serviceError("RequestTimeout", 400), "recoverable"],
  ["400 Throttling", serviceError("Throttling", 400), "recoverable"],
  ["403 RequestTimeTooSkewed", serviceError("RequestTimeTooSkewed", 403), "recoverable"],
  ["400 BadDigest", serviceError("BadDigest", 400), "recoverable"],
  ["400 XAmzContentSHA256Mismatch", serviceError("XAmzContentSHA256Mismatch", 400), "recoverable"],
  ["429 without a known code", serviceError("Unknown", 429), "recoverable"],
  ["502 from a proxy (HTML body, no code)", serviceError("Unknown", 502), "recoverable"],
  ["504 gateway timeout", serviceError("Unknown", 504), "recoverable"],
  ["403 AccessDenied", serviceError("AccessDenied", 403), "access-denied"],
  ["403 InvalidAccessKeyId", serviceError("InvalidAccessKeyId", 403), "access-denied"],
  ["403 SignatureDoesNotMatch", serviceError("SignatureDoesNotMatch", 403), "access-denied"],
  ["400 ExpiredToken", serviceError("ExpiredToken", 400), "access-denied"],
  ["403 on a HEAD (no body, no code)", serviceError("Forbidden", 403), "access-denied"],
  [
    "NoSuchBucket",
    new NoSuchBucket({ message: "The specified bucket does not exist", $metadata: metadata(404) }),
    "no-such-bucket",
  ],
  [
    "NoSuchKey",
    new NoSuchKey({ message: "The specified key does not exist.", $metadata: metadata(404) }),
    "no-such-key",
  ],
  ["404 on a HEAD", new NotFound({ message: "UnknownError", $metadata: metadata(404) }), "no-such-key"],
  [
    "NoSuchUpload",
    new NoSuchUpload({ message: "The specified upload does not exist.", $metadata: metadata(404) }),
    "no-such-upload",
  ],
  ["501 NotImplemented (s3rver's ListMultipartUploads)", serviceError("NotImplemented", 501), "fatal"],
  ["405 MethodNotAllowed (s3rver's AbortMultipartUpload)", serviceError("MethodNotAllowed", 405), "fatal"],
  ["400 InvalidBucketName", serviceError("InvalidBucketName", 400), "fatal"],
  ["400 EntityTooSmall", serviceError("EntityTooSmall", 400), "fatal"],
  ["a local file error", Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" }), "fatal"],
  ["a plain error", new Error("boom"), "fatal"],
  ["a thrown string", "boom", "fatal"],
  ["undefined", undefined, "fatal"],
];

describe("classifyStorageError", () => {
  it.each(cases.map(([label, error, kind]) => [label, kind, error] as const))(
    "%s is %s",
    (_label, kind, error) => {
      expect(classifyStorageError(error)).toBe(kind);
    },
  );
});

describe("toStorageError", () => {
  const uri = "s3://media-out/jobs/1/out.mp4";

  it("a missing bucket becomes StorageRefusedError naming the bucket", () => {
    const error = toStorageError(
      new NoSuchBucket({ message: "The specified bucket does not exist", $metadata: metadata(404) }),
      "upload",
      uri,
    );
    expect(error).toBeInstanceOf(StorageRefusedError);
    expect((error as StorageRefusedError).reason).toBe("no-such-bucket");
    expect((error as Error).message).toBe(`upload ${uri}: bucket "media-out" does not exist`);
  });

  it("access denied becomes StorageRefusedError naming the bucket and the store's code", () => {
    const error = toStorageError(serviceError("AccessDenied", 403, "Access Denied"), "upload", uri) as Error;
    expect(error).toBeInstanceOf(StorageRefusedError);
    expect(error.message).toContain('access denied to bucket "media-out"');
    expect(error.message).toContain("AccessDenied: Access Denied");
  });

  it("a missing key becomes InputNotFoundError naming the URI", () => {
    const error = toStorageError(new NoSuchKey({ message: "x", $metadata: metadata(404) }), "download", uri);
    expect(error).toBeInstanceOf(InputNotFoundError);
    expect((error as Error).message).toBe(`no object at ${uri}`);
  });

  it("a store error it cannot retry becomes StorageFailedError", () => {
    const error = toStorageError(serviceError("EntityTooSmall", 400), "upload", uri);
    expect(error).toBeInstanceOf(StorageFailedError);
  });

  it("a recoverable error outside a retry loop becomes StorageUnavailableError", () => {
    const error = toStorageError(networkError("ECONNREFUSED", "connect ECONNREFUSED"), "put", uri) as Error;
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("errors that are not the store's, and ours, pass through unchanged", () => {
    const local = Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" });
    expect(toStorageError(local, "upload", uri)).toBe(local);
    const ours = new InputNotFoundError(uri);
    expect(toStorageError(ours, "copy", uri)).toBe(ours);
  });

  it("after a cancel, the cancel's reason is what the caller gets", () => {
    const controller = new AbortController();
    controller.abort(new Error("job cancelled"));
    expect(toStorageError(networkError("ECONNRESET", "x"), "upload", uri, controller.signal)).toBe(
      controller.signal.reason,
    );
  });
});
