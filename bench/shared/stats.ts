/** Summaries of measured samples. */

/** Nearest-rank percentile of ascending `sorted`; NaN when there is no sample. */
export function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** The middle value (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export interface Spread {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

/** Nearest-rank p50 and p99 of the finite values (below 100 samples, p99 is the largest). */
export function spread(values: number[]): Spread {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return {
    samples: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}
