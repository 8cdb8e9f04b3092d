/**
 * Which parts of a file still being written can go up now; pure. A writer that never seeks
 * back (MPEG-TS, fragmented MP4) leaves every byte below the file's size final, so a part is
 * ready once the file has grown past its end. Part 1 holds the header a muxer may rewrite at
 * the end, and the last part is short until the writer is done: both wait for the exit.
 */
import type { PartRange } from "@tjm/storage";

/**
 * Parts 2…, in order, whose whole range lies within the first `written` bytes and that are
 * not in `taken`, up to the part limit (a file that outgrows it is sent again with bigger
 * parts at the end).
 */
export function readyParts(
  written: number,
  partSize: number,
  taken: ReadonlySet<number>,
  partLimit: number,
): PartRange[] {
  if (partSize <= 0) throw new RangeError(`bad part size ${partSize}`);
  const complete = Math.min(Math.floor(written / partSize), partLimit);
  const ready: PartRange[] = [];
  for (let partNumber = 2; partNumber <= complete; partNumber++) {
    if (!taken.has(partNumber)) {
      ready.push({ partNumber, offset: (partNumber - 1) * partSize, length: partSize });
    }
  }
  return ready;
}

/**
 * Whether a part sent while the file grew is still a whole part of the final file; the
 * caller then compares its bytes (a writer may have rewritten them).
 */
export function partStillInFile(partNumber: number, partSize: number, finalSize: number): boolean {
  return partNumber * partSize <= finalSize;
}
