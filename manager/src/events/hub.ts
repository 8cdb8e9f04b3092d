import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { streams } from "@tjm/protocol";
import { ensurePrefixStreams } from "../outbox/index.ts";
import type { EventEnvelope } from "../outbox/relay.ts";
import type { Broker } from "../platform/broker.ts";
import type { Logger } from "../platform/logger.ts";

export type EventListener = (event: EventEnvelope) => void;

const RETRY_MS = 1000;
const decoder = new TextDecoder();

/**
 * Follows this prefix's events stream from "now" with an ordered consumer (it re-creates
 * itself after a disconnect) and hands each event to every in-process listener. One per
 * Manager process, however many SSE clients it serves — and only while at least one
 * listens, so a Manager nobody watches spends nothing on events.
 */
export class EventHub {
  private readonly listeners = new Set<EventListener>();
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
  ) {}

  /** Adds a listener; `ready` resolves once the stream is followed, so no later event is missed. */
  subscribe(listener: EventListener): { unsubscribe: () => void; ready: Promise<void> } {
    this.listeners.add(listener);
    this.wakeIdle?.();
    const ready = this.live
      ? Promise.resolve()
      : new Promise<void>((resolve) => this.liveWaiters.push(resolve));
    return {
      ready,
      unsubscribe: () => {
        this.listeners.delete(listener);
        if (this.listeners.size === 0) void this.stopConsuming?.();
      },
    };
  }

  /**
   * Hands an event to this process's listeners only. For what is deliberately not stored
   * (job.progress): every replica hears the Workers' progress itself and tells its own clients.
   */
  publishLocal(event: EventEnvelope): void {
    for (const listener of this.listeners) listener(event);
  }

  get subscribers(): number {
    return this.listeners.size;
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
      if (this.listeners.size === 0) {
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
      if (!this.stopped && this.listeners.size > 0)
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  private async follow(nc: NatsConnection): Promise<void> {
    await ensurePrefixStreams(nc, this.subjectPrefix);
    const consumer = await jetstream(nc).consumers.get(streams(this.subjectPrefix).events.name, {
      deliver_policy: DeliverPolicy.New,
    });
    const messages = await consumer.consume();
    this.stopConsuming = async () => {
      await messages.close();
    };
    if (this.stopped || this.listeners.size === 0) await messages.close();
    this.live = true;
    for (const resolve of this.liveWaiters.splice(0)) resolve();
    try {
      for await (const message of messages) {
        let event: EventEnvelope;
        try {
          event = JSON.parse(decoder.decode(message.data));
        } catch (err) {
          this.logger.warn("dropping an event that is not JSON", { err, subject: message.subject });
          continue;
        }
        for (const listener of this.listeners) listener(event);
      }
    } finally {
      this.live = false;
      this.stopConsuming = undefined;
    }
  }
}
