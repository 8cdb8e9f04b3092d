/**
 * `s3://bucket/key` locations; pure. The key is taken literally, not percent-decoded, as the
 * AWS CLI does.
 */

export interface S3Location {
  bucket: string;
  key: string;
}

/** S3's limit on an object key, in UTF-8 bytes. */
export const S3_KEY_MAX_BYTES = 1024;

/** Why a bucket name breaks the S3 naming rules, or undefined when it follows them. */
export function bucketNameProblem(bucket: string): string | undefined {
  if (bucket.length < 3 || bucket.length > 63) return "bucket name must be 3 to 63 characters long";
  if (!/^[a-z0-9.-]+$/.test(bucket))
    return "bucket name may hold only lowercase letters, digits, dots and hyphens";
  if (!/^[a-z0-9]/.test(bucket) || !/[a-z0-9]$/.test(bucket))
    return "bucket name must start and end with a letter or digit";
  if (bucket.includes("..") || bucket.includes(".-") || bucket.includes("-.")) {
    return "bucket name must not hold two adjacent periods or a period next to a hyphen";
  }
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(bucket)) return "bucket name must not look like an IP address";
  if (bucket.startsWith("xn--") || bucket.startsWith("sthree-")) return "bucket name uses a reserved prefix";
  return undefined;
}

/** Half of a UTF-16 pair on its own: JavaScript keeps it, PostgreSQL's jsonb refuses it. */
const LONE_SURROGATE = /\p{Cs}/u;

export type S3Parse = { ok: true; location: S3Location } | { ok: false; problem: string };

/** Checks a location someone sent (a plan, a report) and says what is wrong with it. */
export function parseS3Uri(uri: string): S3Parse {
  if (!uri.startsWith("s3://")) return { ok: false, problem: "must be an s3://bucket/key URI" };
  const rest = uri.slice("s3://".length);
  const slash = rest.indexOf("/");
  if (slash < 0) return { ok: false, problem: "must be an s3://bucket/key URI: the object key is missing" };
  const bucket = rest.slice(0, slash);
  const key = rest.slice(slash + 1);
  const bucketProblem = bucketNameProblem(bucket);
  if (bucketProblem) return { ok: false, problem: bucketProblem };
  if (key.length === 0) return { ok: false, problem: "object key must not be empty" };
  if (new TextEncoder().encode(key).length > S3_KEY_MAX_BYTES) {
    return { ok: false, problem: `object key must be at most ${S3_KEY_MAX_BYTES} bytes` };
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(key))
    return { ok: false, problem: "object key must not hold control characters" };
  if (LONE_SURROGATE.test(key)) return { ok: false, problem: "object key must be well-formed Unicode" };
  return { ok: true, location: { bucket, key } };
}

/**
 * The bucket and key of a location that was validated where it entered (a plan, a lease, a
 * report); a TypeError naming the problem means a bug, not a user's mistake.
 */
export function splitS3Uri(uri: string): S3Location {
  const parsed = parseS3Uri(uri);
  if (!parsed.ok)
    throw new TypeError(`not an s3://bucket/key URI (${parsed.problem}): ${JSON.stringify(uri)}`);
  return parsed.location;
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
