/**
 * How a claimed message leaves: e-mail over SMTP (nodemailer), SMS through a signed HTTPS
 * webhook, or, only when configured so, a log line that says a message was not sent. A send
 * that fails throws DeliveryError; `permanent` says retrying the same message cannot help.
 */
import type { Logger } from "@tjm/platform";
import { createTransport } from "nodemailer";
import type { Channel, ClaimedMessage } from "./store.ts";
import type { RenderedEmail, RenderedSms } from "./templates.ts";
import { MESSAGE_ID_HEADER, SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from "./webhook-signature.ts";

export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export interface Transport {
  readonly channel: Channel;
  /** What it is, for the log: "smtp", "webhook", "log". */
  readonly kind: string;
  send(message: ClaimedMessage): Promise<void>;
  close(): Promise<void>;
}

export type SmtpTlsMode = "none" | "starttls" | "tls";

export interface SmtpSettings {
  host: string;
  port: number;
  /** none: plain text (a relay on loopback); starttls: upgrade, refused without it; tls: TLS from the first byte. */
  tls: SmtpTlsMode;
  username: string | undefined;
  password: string | undefined;
  fromAddress: string;
  fromName: string;
  timeoutMs: number;
}

/**
 * The stable Message-ID of an outbox row: the same on every resend, so a mail store or a
 * person recognises a duplicate. Its right side is the sender's domain (RFC 5322 §3.6.4).
 */
export function messageIdOf(id: string, fromAddress: string): string {
  const domain = fromAddress.slice(fromAddress.lastIndexOf("@") + 1) || "tjm.invalid";
  return `<${id}@${domain}>`;
}

/** SMTP reply codes 5xx (but 503, a sequence error) refuse the message itself; 4xx and no reply are worth retrying. */
const isPermanentSmtpReply = (code: number | undefined) =>
  code !== undefined && code >= 500 && code < 600 && code !== 503;

export function smtpTransport(settings: SmtpSettings): Transport {
  const mailer = createTransport({
    pool: true,
    maxConnections: 4,
    host: settings.host,
    port: settings.port,
    secure: settings.tls === "tls",
    requireTLS: settings.tls === "starttls",
    ignoreTLS: settings.tls === "none",
    auth:
      settings.username === undefined
        ? undefined
        : { user: settings.username, pass: settings.password ?? "" },
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
    // nodemailer's own logger would print the message, code included: off.
    logger: false,
    debug: false,
  });
  return {
    channel: "email",
    kind: "smtp",
    async send(message) {
      const body = message.body as RenderedEmail;
      try {
        await mailer.sendMail({
          from: { name: settings.fromName, address: settings.fromAddress },
          to: message.recipient,
          subject: body.subject,
          text: body.text,
          html: body.html,
          messageId: messageIdOf(message.id, settings.fromAddress),
          headers: { "Auto-Submitted": "auto-generated", "Content-Language": message.locale },
        });
      } catch (err) {
        const { responseCode, code } = err as { responseCode?: number; code?: string };
        // The reason is stored and logged: the server's reply code and nodemailer's error code
        // only, never its message (which may quote what was sent).
        const reason = responseCode === undefined ? `smtp ${code ?? "error"}` : `smtp reply ${responseCode}`;
        throw new DeliveryError(reason, isPermanentSmtpReply(responseCode));
      }
    },
    async close() {
      mailer.close();
    },
  };
}

export interface WebhookSettings {
  url: string;
  secret: string;
  timeoutMs: number;
}

/** 408 (timeout), 425 (too early) and 429 (slow down) ask for a retry; any other 4xx refuses the message. */
const RETRYABLE_CLIENT_STATUSES = new Set([408, 425, 429]);

/**
 * POSTs `{id, to, text, locale, template}` as JSON, signed (webhook-signature.ts); the row id
 * is also the Idempotency-Key header, the same on every resend. A 2xx is sent.
 */
export function webhookSmsTransport(settings: WebhookSettings): Transport {
  return {
    channel: "sms",
    kind: "webhook",
    async send(message) {
      const body = JSON.stringify({
        id: message.id,
        to: message.recipient,
        text: (message.body as RenderedSms).text,
        locale: message.locale,
        template: message.template,
      });
      const timestamp = Math.floor(Date.now() / 1000);
      let response: Response;
      try {
        response = await fetch(settings.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            [TIMESTAMP_HEADER]: String(timestamp),
            [SIGNATURE_HEADER]: await signWebhook(settings.secret, timestamp, body),
            [MESSAGE_ID_HEADER]: message.id,
          },
          body,
          redirect: "manual",
          signal: AbortSignal.timeout(settings.timeoutMs),
        });
      } catch (err) {
        throw new DeliveryError(
          `webhook ${(err as Error).name === "TimeoutError" ? "timeout" : "unreachable"}`,
          false,
        );
      }
      await response.body?.cancel();
      if (response.ok) return;
      const permanent =
        response.status >= 400 && response.status < 500 && !RETRYABLE_CLIENT_STATUSES.has(response.status);
      throw new DeliveryError(`webhook status ${response.status}`, permanent);
    },
    async close() {},
  };
}

/** An address or number with most of it hidden: enough to tell two apart in a log, not to use. */
export function maskRecipient(recipient: string): string {
  const at = recipient.lastIndexOf("@");
  if (at > 0) return `${recipient.slice(0, 1)}***${recipient.slice(at)}`;
  return `***${recipient.slice(-2)}`;
}

/**
 * Configured explicitly (EMAIL_TRANSPORT=log, SMS_TRANSPORT=log) for a machine without a mail
 * server or an SMS gateway: logs that a message was written and NOT sent, never its text,
 * which may hold a code.
 */
export function logTransport(channel: Channel, logger: Logger): Transport {
  return {
    channel,
    kind: "log",
    async send(message) {
      logger.info("message not sent: the log transport only records it", {
        messageId: message.id,
        channel,
        template: message.template,
        locale: message.locale,
        recipient: maskRecipient(message.recipient),
      });
    },
    async close() {},
  };
}
