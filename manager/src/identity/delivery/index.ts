/**
 * The delivery aggregate, messages people receive: e-mail over SMTP and SMS through a
 * webhook, sent from the message outbox, rendered from one ICU catalogue per locale.
 *
 * A feature that sends a message calls `enqueueMessage(tx, …)` inside the transaction of what
 * caused it, then `wake()` after the commit. A channel without a configured transport is
 * refused at enqueue (ChannelNotConfiguredError), never sent nowhere in silence.
 */
import type { Logger } from "@tjm/platform";
import type { Locale } from "@tjm/platform/locale";
import type { Sql, TransactionSql } from "../../platform/db.ts";
import { type MessageOutcome, MessageSender, type RetryPolicy } from "./sender.ts";
import { type Channel, insertMessage } from "./store.ts";
import {
  renderEmail,
  renderSms,
  type StoredParams,
  TEMPLATES,
  type TemplateName,
  type TemplateParams,
} from "./templates.ts";
import {
  logTransport,
  type SmtpSettings,
  smtpTransport,
  type Transport,
  type WebhookSettings,
  webhookSmsTransport,
} from "./transports.ts";

export { type Catalogue, CatalogueError, compileCatalogues } from "@tjm/platform/catalogue";
export * from "@tjm/platform/locale";
export { normalizeCode } from "./codes.ts";
export type { Channel } from "./store.ts";
export type { TemplateName, TemplateParams } from "./templates.ts";
export { messageIdOf } from "./transports.ts";
export { signWebhook, verifyWebhook } from "./webhook-signature.ts";

export type EmailTransportSettings = { kind: "none" } | { kind: "log" } | ({ kind: "smtp" } & SmtpSettings);
export type SmsTransportSettings =
  | { kind: "none" }
  | { kind: "log" }
  | ({ kind: "webhook" } & WebhookSettings);

export interface DeliverySettings {
  email: EmailTransportSettings;
  sms: SmsTransportSettings;
  /** The name messages are signed with and sent from (MESSAGE_SERVICE_NAME). */
  serviceName: string;
  retry: RetryPolicy;
  sendTimeoutMs: number;
  pollMs: number;
}

export class ChannelNotConfiguredError extends Error {
  constructor(readonly channel: Channel) {
    super(
      channel === "email"
        ? "no e-mail transport is configured: set EMAIL_TRANSPORT=smtp (and the SMTP_* settings), or EMAIL_TRANSPORT=log on a machine where e-mail is only logged"
        : "no SMS transport is configured: set SMS_TRANSPORT=webhook (and the SMS_WEBHOOK_* settings), or SMS_TRANSPORT=log on a machine where SMS are only logged",
    );
  }
}

export interface MessageRequest<T extends TemplateName> {
  channel: Channel;
  /** An e-mail address, or an E.164 phone number. */
  recipient: string;
  locale: Locale;
  template: T;
  params: TemplateParams[T];
}

export interface Delivery {
  /** The channels a message may be enqueued for. */
  readonly channels: ReadonlySet<Channel>;
  /**
   * Writes a message in the caller's transaction: it is sent if and only if that transaction
   * commits. Rendered now, in its locale; a message holding a code expires with it (`minutes`).
   * Returns its id (its Message-ID and idempotency key).
   */
  enqueueMessage<T extends TemplateName>(tx: TransactionSql, request: MessageRequest<T>): Promise<string>;
  /** Call after committing messages: the sender takes them now rather than at its next tick. */
  wake(): void;
  start(): void;
  stop(): Promise<void>;
}

function transportsOf(settings: DeliverySettings, logger: Logger): Map<Channel, Transport> {
  const transports = new Map<Channel, Transport>();
  const { email, sms } = settings;
  if (email.kind === "smtp") transports.set("email", smtpTransport(email));
  if (email.kind === "log") transports.set("email", logTransport("email", logger));
  if (sms.kind === "webhook") transports.set("sms", webhookSmsTransport(sms));
  if (sms.kind === "log") transports.set("sms", logTransport("sms", logger));
  return transports;
}

function storedParams(params: Record<string, unknown>): StoredParams {
  const stored: StoredParams = {};
  for (const [name, value] of Object.entries(params)) {
    stored[name] = value instanceof Date ? value.toISOString() : (value as string | number);
  }
  return stored;
}

export function createDelivery(
  settings: DeliverySettings,
  deps: { sql: Sql; logger: Logger; outcome?: (channel: Channel, outcome: MessageOutcome) => void },
): Delivery {
  const transports = transportsOf(settings, deps.logger);
  const sender = new MessageSender({
    sql: deps.sql,
    logger: deps.logger,
    transports,
    retry: settings.retry,
    sendTimeoutMs: settings.sendTimeoutMs,
    tickMs: settings.pollMs,
    outcome: deps.outcome,
  });
  const channels = new Set(transports.keys());
  return {
    channels,
    async enqueueMessage(tx, request) {
      if (!channels.has(request.channel)) throw new ChannelNotConfiguredError(request.channel);
      const spec = TEMPLATES[request.template];
      const params = storedParams(request.params as unknown as Record<string, unknown>);
      const id = crypto.randomUUID();
      const input = {
        template: request.template,
        locale: request.locale,
        params,
        service: settings.serviceName,
        reference: id,
      };
      const minutes = (request.params as { minutes?: number }).minutes;
      return insertMessage(tx, {
        id,
        channel: request.channel,
        recipient: request.recipient,
        locale: request.locale,
        template: request.template,
        params,
        body: request.channel === "email" ? renderEmail(input) : renderSms(input),
        holdsCode: spec.holdsCode,
        expiresInMs: spec.holdsCode && minutes !== undefined ? minutes * 60_000 : undefined,
      });
    },
    wake: () => sender.wake(),
    start: () => sender.start(),
    stop: () => sender.stop(),
  };
}
