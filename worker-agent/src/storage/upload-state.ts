/**
 * The resumable upload's state file: which multipart upload, of which file version, and the
 * parts S3 already holds. Rewritten after every part, atomically (temp file, fsync, rename),
 * so a crash leaves the old state or the new one, never half of either. Mode 0600: the
 * upload id is enough to add parts to (or abort) the upload.
 */
import type { Stats } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { formatS3Uri, MAX_PARTS, type S3Location } from "@tjm/storage";
import { z } from "zod";
import { writeFileAtomic } from "../platform/atomic-file.ts";
import { MIN_PART_SIZE } from "./parts.ts";

const CompletedPartSchema = z.object({
  PartNumber: z.number().int().min(1).max(10_000),
  ETag: z.string().min(1),
});

export const UploadStateSchema = z.object({
  version: z.literal(1),
  /**
   * The upload began while ffmpeg was still writing the file (growing-upload.ts): its size
   * and parts are provisional, so it is aborted, never resumed. An agent that predates the
   * field drops it and finds the size and mtime wrong: aborted as well.
   */
  growing: z.literal(true).optional(),
  uploadId: z.string().min(1),
  bucket: z.string().min(1),
  key: z.string().min(1),
  fileSize: z.number().int().min(0),
  /** With the size, how we notice the file was rewritten since the upload began. */
  fileMtimeMs: z.number(),
  partSize: z.number().int().min(1),
  parts: z.array(CompletedPartSchema),
});

export type UploadState = z.infer<typeof UploadStateSchema>;
export type CompletedPart = z.infer<typeof CompletedPartSchema>;

export type ReadStateResult =
  | { status: "absent" }
  | { status: "corrupt"; reason: string }
  | { status: "ok"; state: UploadState };

export async function readUploadState(path: string): Promise<ReadStateResult> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { status: "absent" };
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { status: "corrupt", reason: (error as Error).message };
  }
  const parsed = UploadStateSchema.safeParse(json);
  return parsed.success
    ? { status: "ok", state: parsed.data }
    : { status: "corrupt", reason: parsed.error.issues.map((issue) => issue.message).join("; ") };
}

export async function writeUploadState(path: string, state: UploadState): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // No directory fsync: this runs after every uploaded part.
  await writeFileAtomic(path, `${JSON.stringify(state)}\n`, { mode: 0o600 });
}

export async function removeUploadState(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** Why a saved state cannot be resumed for this file and key, or undefined if it can. */
export function stateMismatch(
  state: UploadState,
  target: S3Location,
  info: Stats,
  partLimit: number = MAX_PARTS,
): string | undefined {
  if (state.growing) return "the upload began while the file was still being written";
  if (state.bucket !== target.bucket || state.key !== target.key) {
    return `the state is for ${formatS3Uri(state)}, not ${formatS3Uri(target)}`;
  }
  if (state.fileSize !== info.size || state.fileMtimeMs !== info.mtimeMs) {
    return "the file changed since the upload began";
  }
  if (state.partSize < MIN_PART_SIZE || Math.ceil(state.fileSize / state.partSize) > partLimit) {
    return `the state's part size ${state.partSize} is not usable`;
  }
  return undefined;
}
