/**
 * How an object is cut into numbered byte ranges: an upload's parts, a large copy's ranges;
 * and the ETag S3 gives an object made of parts; pure. S3's limits: at most 10,000 parts, and
 * a single CopyObject up to 5 GiB.
 */
import { createHash } from "node:crypto";

export const MIB = 1024 * 1024;
export const GIB = 1024 * MIB;
export const MAX_PARTS = 10_000;
export const MAX_SINGLE_COPY_SIZE = 5 * GIB;
/** 512 MiB ranges: a 5 TiB object still fits in 10,000 parts; each part is one server-side copy. */
export const COPY_PART_SIZE = 512 * MIB;

export interface PartRange {
  /** 1-based, as S3 numbers them. */
  partNumber: number;
  offset: number;
  length: number;
}

/** The parts of an object, in order; an empty one is one empty part (S3 allows a short last part). */
export function planParts(size: number, partSize: number): PartRange[] {
  if (partSize <= 0) throw new RangeError(`bad part size ${partSize}`);
  const count = Math.max(1, Math.ceil(size / partSize));
  if (count > MAX_PARTS) throw new RangeError(`${count} parts is more than S3's ${MAX_PARTS}`);
  return Array.from({ length: count }, (_, index) => {
    const offset = index * partSize;
    return { partNumber: index + 1, offset, length: Math.min(partSize, size - offset) };
  });
}

export interface CopyRange {
  partNumber: number;
  /** The CopySourceRange header: `bytes=first-last`, both inclusive. */
  range: string;
}

export function planCopyParts(objectSize: number, partSize: number = COPY_PART_SIZE): CopyRange[] {
  if (objectSize <= 0) throw new RangeError("a ranged copy needs a non-empty object");
  return planParts(objectSize, partSize).map(({ partNumber, offset, length }) => ({
    partNumber,
    range: `bytes=${offset}-${offset + length - 1}`,
  }));
}

/**
 * The ETag S3 gives a multipart object, from its parts' ETags in part order: the MD5 of the
 * parts' binary MD5s, then "-" and the part count. Undefined when a part's ETag is not a plain
 * MD5 (SSE-KMS, some other stores).
 */
export function multipartEtag(partEtags: readonly string[]): string | undefined {
  const digests: Buffer[] = [];
  for (const etag of partEtags) {
    const hex = etag.replaceAll('"', "");
    if (!/^[0-9a-f]{32}$/i.test(hex)) return undefined;
    digests.push(Buffer.from(hex, "hex"));
  }
  return `"${createHash("md5").update(Buffer.concat(digests)).digest("hex")}-${partEtags.length}"`;
}
