/**
 * The output timeline left after removed segments: which spans of the input are kept, how
 * long the result is, and where an input instant lands in it. Milliseconds throughout.
 */

import type { RemovedSegment } from "@tjm/protocol";
import { PlanNotApplicableError } from "./plan-errors.ts";

/** A kept span of the input; `endMs` undefined: up to the input's end, wherever it really is. */
export interface KeptRange {
  startMs: number;
  endMs: number | undefined;
}

/**
 * The removed segments cover the whole input, so no output could have any content: whoever
 * meets it first (the ffmpeg arguments, or the retiming of soft subtitles before them).
 */
export class NothingLeftError extends PlanNotApplicableError {
  override name = "NothingLeftError";
  constructor(message: string) {
    super(message, "INPUT_INCOMPATIBLE");
  }
}

/**
 * Segments are clipped to [0, durationMs]; ones starting at or after the end remove nothing.
 * The last kept range is open-ended so the encode runs to the input's real end, which can
 * differ from the container's stated duration by a frame or two.
 */
export function keptRanges(removed: readonly RemovedSegment[], durationMs: number): KeptRange[] {
  const sorted = [...removed].filter((s) => s.startMs < durationMs).sort((a, b) => a.startMs - b.startMs);
  const ranges: KeptRange[] = [];
  let cursor = 0;
  for (const segment of sorted) {
    if (segment.startMs > cursor) ranges.push({ startMs: cursor, endMs: segment.startMs });
    cursor = Math.max(cursor, segment.endMs);
  }
  if (cursor < durationMs) ranges.push({ startMs: cursor, endMs: undefined });
  if (ranges.length === 0) throw new NothingLeftError("the removed segments cover the whole input");
  return ranges;
}

export function keptDurationMs(ranges: readonly KeptRange[], durationMs: number): number {
  return ranges.reduce((total, range) => total + (range.endMs ?? durationMs) - range.startMs, 0);
}

/**
 * An input span [startMs, endMs) as it appears in the output: the parts inside removed
 * segments are cut out and the rest joined, so a span that straddles a cut keeps both sides.
 * undefined when nothing of it is kept.
 */
export function spanOnOutput(
  startMs: number,
  endMs: number,
  ranges: readonly KeptRange[],
): { startMs: number; endMs: number } | undefined {
  let before = 0;
  let first: number | undefined;
  let last: number | undefined;
  for (const range of ranges) {
    const rangeEnd = range.endMs ?? Number.POSITIVE_INFINITY;
    const from = Math.max(startMs, range.startMs);
    const to = Math.min(endMs, rangeEnd);
    if (from < to) {
      first ??= before + from - range.startMs;
      last = before + to - range.startMs;
    }
    if (range.endMs !== undefined) before += range.endMs - range.startMs;
  }
  return first === undefined || last === undefined ? undefined : { startMs: first, endMs: last };
}
