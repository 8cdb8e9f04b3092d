import { DeliverPolicy, jetstream, jetstreamManager, type StreamInfo } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@tjm/platform";
import { decodeMessage, streams } from "@tjm/protocol";
import { type EventEnvelope, ensurePrefixStreams, PULL_EXPIRES_MS } from "../outbox/index.ts";
import type { Broker } from "../platform/broker.ts";
import { EventFanout, type EventSubscriber } from "./fanout.ts";
import { EventEnvelopeSchema } from "./schema.ts";

const RETRY_MS = 1000;
/** 15 s: well inside the idle timeouts of common proxies and load balancers. */
export const KEEP_ALIVE_MS = 15_000;

/** Where following the stream goes on: the stream (by creation time) and its next sequence. */
interface Position {
  created: string;
  nextSeq: number;
}

/**
 * Follows this prefix's events stream from "now" with an ordered consumer (it re-creates
 * itself after a disconnect) and writes each event to every in-process subscriber (fanout.ts).
 * One per Manager process, however many SSE clients it serves — and only while at least one
 * listens, so a Manager nobody watches spends nothing on events.
 *
 * A message that is not an event envelope is logged, counted and skipped. When the stream
 * or the consumer disappears (the stream was deleted, NATS lost its store), the hub follows
 * again where it stopped; if the stream was re-created meanwhile, from its first message,
 * since all of it came after what the hub had seen.
 */
export class EventHub {
  private readonly fanout: EventFanout;
  /** Messages dropped as not events: what the bad-input tests read. */
  readonly counters = { invalid: 0 };
  private position: Position | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;
  private stopConsuming: (() => Promise<void>) | undefined;
  private wakeIdle: (() => void) | undefined;
  private live = false;
  private liveWaiters: (() => void)[] = [];

  constructor(
    private readonly broker: Broker,
    private readonly subjectPrefix: string,
    private readonly logger: Logger,
    /** The keep-alive comment's interval; 15 s unless a test shortens it. */
    keepAliveMs = KEEP_ALIVE_MS,
  ) {
    this.fanout = new EventFanout(keepAliveMs, logger);
  }

  /** Adds a subscriber: every event followed from now on is written to it if its filter takes it. */
  subscribe(subscriber: EventSubscriber): void {
    this.fanout.add(subscriber);
    this.wakeIdle?.();
  }

  unsubscribe(subscriber: EventSubscriber): void {
    this.fanout.delete(subscriber);
    if (this.fanout.size === 0) void this.stopConsuming?.();
  }

  /**
   * Undefined while the stream is followed; otherwise resolves once it is, so that no later
   * event is missed.
   */
  untilLive(): Promise<void> | undefined {
    return this.live ? undefined : new Promise<void>((resolve) => this.liveWaiters.push(resolve));
  }

  /**
   * Writes an event to this process's subscribers only. For what is deliberately not stored
   * (job.progress): every replica hears the Workers' progress itself and tells its own clients.
   */
  publishLocal(event: EventEnvelope): void {
    this.fanout.publish(event);
  }

  get subscribers(): number {
    return this.fanout.size;
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeIdle?.();
    await this.stopConsuming?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      if (this.fanout.size === 0) {
        // Nobody missed anything while nobody listened: the next listener starts from now.
        this.position = undefined;
        await new Promise<void>((resolve) => {
          this.wakeIdle = resolve;
        });
        this.wakeIdle = undefined;
        continue;
      }
      const nc = this.broker.connection();
      try {
        if (nc) await this.follow(nc);
      } catch (err) {
        this.logger.warn("event hub lost the events stream; following again", { err });
      }
      if (!this.stopped && this.fanout.size > 0)
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  private async follow(nc: NatsConnection): Promise<void> {
    const stream = streams(this.subjectPrefix).events.name;
    await ensurePrefixStreams(nc, this.subjectPrefix, this.broker.streamReplicas);
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    this.position = { created: info.created, nextSeq: nextSequence(this.position, info) };
    const consumer = await jetstream(nc).consumers.get(stream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.position.nextSeq,
    });
    // A deleted stream or consumer ends the loop below instead of the client waiting for it.
    const messages = await consumer.consume({ abort_on_missing_resource: true, expires: PULL_EXPIRES_MS });
    this.stopConsuming = async () => {
      await messages.close();
    };
    // Stopped (or left by every listener) while subscribing: stop, and let the loop below drain
    // and end. Awaiting close() here would wait for an iteration that has not started.
    if (this.stopped || this.fanout.size === 0) messages.stop();
    this.live = true;
    for (const resolve of this.liveWaiters.splice(0)) resolve();
    try {
      for await (const message of messages) {
        this.position = { created: info.created, nextSeq: message.seq + 1 };
        const decoded = decodeMessage(EventEnvelopeSchema, message.data);
        if (!decoded.ok) {
          this.counters.invalid++;
          this.logger.warn("dropping a message that is not an event", {
            subject: message.subject,
            streamSequence: message.seq,
            reason: decoded.reason,
          });
          continue;
        }
        this.fanout.publish(decoded.value);
      }
    } finally {
      this.live = false;
      this.stopConsuming = undefined;
    }
  }
}

/**
 * The first sequence to follow: past the last message when following starts (from now on),
 * where it stopped on the same stream, the first message of a re-created one.
 */
function nextSequence(position: Position | undefined, info: StreamInfo): number {
  if (!position) return info.state.last_seq + 1;
  if (position.created === info.created) return position.nextSeq;
  return Math.max(1, info.state.first_seq);
}
