/**
 * How the uploader sizes its parts, and what it checks a resumed upload against; pure. S3's
 * limits: parts of 5 MiB to 5 GiB (the last one may be smaller) and objects up to 5 TiB.
 * Cutting an object into ranges (planParts) and the multipart ETag are @tjm/storage's, shared
 * with the copy and the Manager's commit.
 */
import { GIB, MAX_PARTS, MIB, type PartRange } from "@tjm/storage";

export { MIB };

export const MIN_PART_SIZE = 5 * MIB;
export const MAX_PART_SIZE = 5 * GIB;
export const MAX_OBJECT_SIZE = 5 * 1024 * GIB;
/**
 * 32 MiB, measured (bench/upload.ts, 1 GiB to Swift s3api on loopback, 4 in flight): 146 MiB/s
 * against 91 at 8 MiB and 121 at 16 MiB, since every part costs the store a request and a
 * segment. 64 MiB gained another 15 % but doubles the memory held (4 parts in flight: 128 MiB
 * here) and the bytes resent when a connection drops mid-part.
 */
export const DEFAULT_PART_SIZE = 32 * MIB;

/**
 * The part size for a file: the requested one (at least 5 MiB), raised to a whole MiB when
 * the file would otherwise need more than the store's part limit (S3: 10,000).
 */
export function choosePartSize(
  fileSize: number,
  requested: number = DEFAULT_PART_SIZE,
  partLimit: number = MAX_PARTS,
): number {
  if (!Number.isSafeInteger(requested) || requested < MIN_PART_SIZE || requested > MAX_PART_SIZE) {
    throw new RangeError(`part size must be a whole number of bytes from 5 MiB to 5 GiB, got ${requested}`);
  }
  if (!Number.isSafeInteger(fileSize) || fileSize < 0) throw new RangeError(`bad file size ${fileSize}`);
  if (fileSize > MAX_OBJECT_SIZE) {
    throw new RangeError(`${fileSize} bytes is more than S3's 5 TiB object limit`);
  }
  const needed = Math.ceil(Math.ceil(fileSize / partLimit) / MIB) * MIB;
  return Math.max(requested, needed);
}

/** The planned parts whose numbers are not among `completed`. */
export function missingParts(plan: readonly PartRange[], completed: Iterable<number>): PartRange[] {
  const done = new Set(completed);
  return plan.filter((part) => !done.has(part.partNumber));
}
