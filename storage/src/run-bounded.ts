/**
 * Runs `work` over `items` with at most `concurrency` at once. The first failure stops new
 * items from starting and aborts the signal handed to the others (so their retry sleeps end),
 * waits for the ones running to settle, then rejects with that first failure.
 */
export async function runBounded<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, signal: AbortSignal) => Promise<void>,
  outer?: AbortSignal,
): Promise<void> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const stop = new AbortController();
  const signal = outer ? AbortSignal.any([outer, stop.signal]) : stop.signal;
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (!failure && !signal.aborted && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item, signal);
      } catch (error) {
        if (!failure) {
          failure = { error };
          stop.abort(new Error("stopped after another item failed"));
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  if (failure) throw failure.error;
  outer?.throwIfAborted();
}
