/**
 * The message sender: claims due outbox rows and hands them to their channel's transport, off
 * every request path. Woken in-process after a commit that wrote messages, and by its tick for
 * rows other replicas wrote and for retries coming due.
 */
import type { Logger } from "@tjm/platform";
import type { Sql } from "../../platform/db.ts";
import { WakeableLoop } from "../../platform/loop.ts";
import {
  type Channel,
  type ClaimedMessage,
  claimDueMessages,
  expireMessages,
  markFailed,
  markRetry,
  markSent,
} from "./store.ts";
import { DeliveryError, type Transport } from "./transports.ts";

export type MessageOutcome = "sent" | "retried" | "failed" | "expired";

export interface RetryPolicy {
  /** Attempts before a message is failed. */
  maxAttempts: number;
  /** The wait after the first failed attempt; it doubles with each one after. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * The wait before attempt `attempts + 1`: exponential from the base, capped, and spread over
 * ±20 % (`random` in [0, 1)) so that messages failed together by one outage do not all come
 * back at the same instant.
 */
export function retryDelayMs(policy: RetryPolicy, attempts: number, random: number): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exponential * (0.8 + 0.4 * random));
}

export interface MessageSenderOptions {
  sql: Sql;
  logger: Logger;
  transports: ReadonlyMap<Channel, Transport>;
  retry: RetryPolicy;
  /** A send taking longer fails; a claimed row is retaken after twice this (its sender died). */
  sendTimeoutMs: number;
  tickMs: number;
  batchSize?: number;
  /** Told each message's outcome (the metric). */
  outcome?: (channel: Channel, outcome: MessageOutcome) => void;
}

export class MessageSender extends WakeableLoop {
  private readonly batchSize: number;

  constructor(private readonly options: MessageSenderOptions) {
    super({ logger: options.logger, tickMs: options.tickMs }, "sending messages");
    this.batchSize = options.batchSize ?? 20;
  }

  protected async pass(): Promise<boolean> {
    const { sql, logger, transports } = this.options;
    for (const expired of await expireMessages(sql)) {
      logger.warn("message failed: it expired before it could be sent", {
        messageId: expired.id,
        channel: expired.channel,
      });
      this.options.outcome?.(expired.channel, "expired");
    }
    if (transports.size === 0) return false;
    const claimed = await claimDueMessages(
      sql,
      [...transports.keys()],
      this.batchSize,
      2 * this.options.sendTimeoutMs,
    );
    await Promise.all(claimed.map((message) => this.send(message)));
    return claimed.length === this.batchSize;
  }

  private async send(message: ClaimedMessage): Promise<void> {
    const { sql, logger, retry } = this.options;
    const transport = this.options.transports.get(message.channel) as Transport;
    const fields = {
      messageId: message.id,
      channel: message.channel,
      template: message.template,
      attempt: message.attempts,
    };
    try {
      await transport.send(message);
    } catch (err) {
      const reason = err instanceof DeliveryError ? err.message : "unexpected error";
      const permanent = err instanceof DeliveryError && err.permanent;
      if (permanent || message.attempts >= retry.maxAttempts) {
        await markFailed(sql, message.id, reason);
        // Neither the text nor the error's message: either may quote the code.
        logger.warn("message failed", { ...fields, reason, permanent });
        this.options.outcome?.(message.channel, "failed");
      } else {
        const delayMs = retryDelayMs(retry, message.attempts, Math.random());
        await markRetry(sql, message.id, delayMs, reason);
        logger.info("message not sent; retrying", { ...fields, reason, retryInMs: delayMs });
        this.options.outcome?.(message.channel, "retried");
      }
      return;
    }
    await markSent(sql, message.id);
    logger.debug("message sent", { ...fields, transport: transport.kind });
    this.options.outcome?.(message.channel, "sent");
  }

  override async stop(): Promise<void> {
    await super.stop();
    await Promise.all([...this.options.transports.values()].map((transport) => transport.close()));
  }
}
