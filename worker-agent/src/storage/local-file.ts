/** Reading the local file being uploaded: part ranges, its SHA-256, and whether it changed. */
import { createHash } from "node:crypto";
import { createReadStream, type Stats } from "node:fs";
import { type FileHandle, stat } from "node:fs/promises";

export async function readRange(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, offset + filled);
    if (bytesRead === 0)
      throw new Error(`file ended at ${offset + filled} bytes, before part end ${offset + length}`);
    filled += bytesRead;
  }
  return buffer;
}

export async function sha256OfFile(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024, signal })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest("hex");
}

export async function assertUnchanged(file: string, before: Stats): Promise<void> {
  const after = await stat(file);
  if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
    throw new Error(`${file} changed while it was being uploaded`);
  }
}
