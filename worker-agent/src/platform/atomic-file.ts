/**
 * Replacing a file atomically: the data goes to a temporary file next to it, is fsynced, and
 * the temporary file is renamed over the target, so a crash leaves either the old file or the
 * new one, never half of one. Used by the identity store, attempt records and upload state.
 */
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";

export interface AtomicWriteOptions {
  /** The new file's mode, set exactly (open's mode passes through the umask). */
  mode: number;
  /**
   * Also fsync the directory after the rename, so a power cut cannot lose the new directory
   * entry. Costs a sync per write: leave it off for files rewritten often.
   */
  syncDirectory?: boolean;
}

/** Writes `data` to `path` atomically; on failure the temporary file is removed and the error rethrown. */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions,
): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx", options.mode);
    try {
      await handle.chmod(options.mode);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
    if (options.syncDirectory) await syncDirectory(dirname(path));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Makes a rename durable: without it a power cut can lose the new directory entry. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
