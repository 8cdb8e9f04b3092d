/**
 * One Manager's event subscribers and the write of each event to them. An event is framed
 * once (serialised and encoded) and the same bytes go to every subscriber whose filter takes
 * it, synchronously, in one loop: no promise, timer or closure per subscriber and event. At
 * 10,000 subscribers the writes themselves (a syscall each) are most of an event's cost.
 */
import type { Logger } from "@tjm/platform";
import type { EventEnvelope } from "../outbox/index.ts";

const encoder = new TextEncoder();
export const KEEP_ALIVE_FRAME = encoder.encode(": keep-alive\n\n");

/** Where one subscriber's bytes go: Node's response, or a web stream elsewhere. */
export interface EventSink {
  /** Queues bytes for the subscriber; a sink that can no longer keep up ends itself. */
  write(frame: Uint8Array): void;
}

/** What one subscriber asked for (`kinds`, `jobId`), and where its frames go. */
export interface EventSubscriber {
  kinds: ReadonlySet<string> | undefined;
  jobId: string | undefined;
  sink: EventSink;
}

/** An event's SSE frame: `id`, `event` (the kind) and `data` (the envelope as JSON). */
export function frameOf(event: EventEnvelope): Uint8Array {
  return encoder.encode(`id: ${event.id}\nevent: ${event.kind}\ndata: ${JSON.stringify(event)}\n\n`);
}

export function takes(subscriber: EventSubscriber, event: EventEnvelope): boolean {
  if (subscriber.kinds !== undefined && !subscriber.kinds.has(event.kind)) return false;
  return subscriber.jobId === undefined || event.data.jobId === subscriber.jobId;
}

export class EventFanout {
  private readonly subscribers = new Set<EventSubscriber>();
  private keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly keepAliveMs: number,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.subscribers.size;
  }

  add(subscriber: EventSubscriber): void {
    this.subscribers.add(subscriber);
    // One timer for every subscriber: their keep-alives go out together.
    this.keepAlive ??= setInterval(() => this.broadcast(KEEP_ALIVE_FRAME), this.keepAliveMs);
  }

  delete(subscriber: EventSubscriber): void {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size > 0) return;
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  /**
   * Writes the event to every subscriber it is for, and logs (at debug) when that started and
   * how long until every write was handed to the kernel: the SSE bench's fan-out hops.
   */
  publish(event: EventEnvelope): void {
    if (this.subscribers.size === 0) return;
    const startedAt = performance.now();
    const frame = frameOf(event);
    let written = 0;
    for (const subscriber of this.subscribers) {
      if (!takes(subscriber, event)) continue;
      subscriber.sink.write(frame);
      written++;
    }
    // Node sends what the loop queued in the ticks right after it, before the next check phase.
    setImmediate(() =>
      this.logger.debug("event fanned out", {
        eventId: event.id,
        subscribers: written,
        startedAtMs: performance.timeOrigin + startedAt,
        writtenMs: performance.now() - startedAt,
      }),
    );
  }

  private broadcast(frame: Uint8Array): void {
    for (const subscriber of this.subscribers) subscriber.sink.write(frame);
  }
}
