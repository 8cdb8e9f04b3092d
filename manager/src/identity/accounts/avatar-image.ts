/**
 * What an uploaded avatar must be, and the one way it is turned into the stored avatar: its
 * first bytes must name the type it was declared as, `sharp` decodes it under a lowered pixel
 * limit and re-encodes it at a fixed size. The re-encoding keeps no metadata (EXIF with GPS,
 * XMP, ICC, comments): nothing of the uploaded file but its pixels reaches the stored avatar.
 */

export const AVATAR_CONTENT_TYPES = ["image/png", "image/jpeg", "image/webp"] as const;
export type AvatarContentType = (typeof AVATAR_CONTENT_TYPES)[number];

/** 2 MiB: an avatar is small; the presigned PUT is signed for at most this many bytes. */
export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;

/**
 * 4096 × 4096 pixels (64 MiB decoded as RGBA), down from sharp's 268 megapixels: a small
 * compressed file that decodes to gigabytes (a pixel bomb) is refused from its header.
 */
export const AVATAR_MAX_INPUT_PIXELS = 4096 * 4096;

/** Every avatar is stored as a square of this side, in WebP. */
export const AVATAR_SIDE = 256;
export const AVATAR_STORED_TYPE = "image/webp";

function startsWith(bytes: Uint8Array, prefix: readonly number[], offset = 0): boolean {
  return prefix.every((byte, index) => bytes[offset + index] === byte);
}

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));

/** Whether the bytes begin with the signature of the declared type. */
export function hasSignatureOf(bytes: Uint8Array, contentType: AvatarContentType): boolean {
  switch (contentType) {
    case "image/png":
      return startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    case "image/jpeg":
      return startsWith(bytes, [0xff, 0xd8, 0xff]);
    case "image/webp":
      return startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8);
  }
}

export type AvatarImageRefusal = "too_many_pixels" | "undecodable";

export class AvatarImageRefusedError extends Error {
  constructor(readonly refusal: AvatarImageRefusal) {
    super(refusal === "too_many_pixels" ? "the image has too many pixels" : "the image cannot be decoded");
  }
}

/**
 * Decodes and re-encodes an avatar as a AVATAR_SIDE square WebP (cropped to the centre, turned
 * upright by its EXIF orientation first). sharp is loaded on first use: a Manager that never
 * stores an avatar never loads its native library.
 */
export async function reencodeAvatar(bytes: Uint8Array): Promise<Uint8Array> {
  const { default: sharp } = await import("sharp");
  try {
    const image = sharp(bytes, {
      limitInputPixels: AVATAR_MAX_INPUT_PIXELS,
      failOn: "error",
      animated: false,
    });
    return await image
      .rotate()
      .resize(AVATAR_SIDE, AVATAR_SIDE, { fit: "cover" })
      .webp({ quality: 82 })
      .toBuffer();
  } catch (error) {
    // sharp reports both as plain Errors; the pixel limit is told apart by its message.
    if (error instanceof Error && /pixel limit/i.test(error.message)) {
      throw new AvatarImageRefusedError("too_many_pixels");
    }
    throw new AvatarImageRefusedError("undecodable");
  }
}
