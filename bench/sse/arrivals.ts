/** Each subscriber's arrivals against the events' reference times: what every SSE round reports. */
import { type Spread, spread } from "../shared/stats.ts";
import type { ResultMessage } from "./subscribers.ts";

export type Arrivals = ResultMessage["subscribers"];

export interface DelayRound {
  /** Subscribers whose arrivals were compared. */
  readers: number;
  /** Events with a reference time. */
  events: number;
  /** Readers that received every one of them. */
  receivedAll: number;
  /** (event, reader) pairs delivered. */
  deliveries: number;
  /** Arrival minus the event's reference time, per (event, reader). */
  delay: Spread;
  /** Per event: its last arrival minus its first, the spread of the fan-out over the readers. */
  fanOut: Spread;
}

/**
 * Compares every subscriber's (or only the sampled readers') first arrival of each event with
 * the event's reference time (id → wall-clock ms); ids without one are another round's.
 */
export function compareArrivals(
  subscribers: Arrivals,
  reference: ReadonlyMap<string, number>,
  onlyReaders: boolean,
): DelayRound {
  const delays: number[] = [];
  const spreads = new Map<string, { first: number; last: number }>();
  let readers = 0;
  let receivedAll = 0;
  for (const subscriber of subscribers) {
    if (onlyReaders && !subscriber.reader) continue;
    readers++;
    const seen = new Set<string>();
    subscriber.ids.forEach((id, index) => {
      const at = reference.get(id);
      if (at === undefined || seen.has(id)) return;
      seen.add(id);
      const delay = (subscriber.atMs[index] as number) - at;
      delays.push(delay);
      const known = spreads.get(id);
      if (known) {
        known.first = Math.min(known.first, delay);
        known.last = Math.max(known.last, delay);
      } else spreads.set(id, { first: delay, last: delay });
    });
    if (seen.size === reference.size && reference.size > 0) receivedAll++;
  }
  return {
    readers,
    events: reference.size,
    receivedAll,
    deliveries: delays.length,
    delay: spread(delays),
    fanOut: spread([...spreads.values()].map(({ first, last }) => last - first)),
  };
}
