/**
 * An SMS gateway's webhook on loopback: verifies each request's signature with the verifier
 * TJM ships for receivers, keeps the verified SMS and answers 401 to the rest (a tampered or
 * stale request is counted, not kept). Tests read SMS codes from it. It can answer a status
 * of the test's choice for a while (a gateway failing).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { waitFor } from "@tjm/devstack/services";
import {
  MESSAGE_ID_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifyWebhook,
  type WebhookVerdict,
} from "../../manager/src/identity/delivery/webhook-signature.ts";

export interface ReceivedSms {
  id: string;
  to: string;
  text: string;
  locale: string;
  template: string;
  idempotencyKey: string | undefined;
}

export class SmsWebhook {
  readonly received: ReceivedSms[] = [];
  readonly refused: Exclude<WebhookVerdict, { ok: true }>["reason"][] = [];
  /** When set, every request is answered with it (after verification). */
  failWith: number | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly secret: string,
  ) {}

  /** The Manager's settings that send its SMS here, signed with the receiver's secret. */
  managerEnv(): Record<string, string> {
    return { SMS_TRANSPORT: "webhook", SMS_WEBHOOK_URL: this.url, SMS_WEBHOOK_SECRET: this.secret };
  }

  static async start(secret: string): Promise<SmsWebhook> {
    let receiver: SmsWebhook | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", async () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const verdict = await verifyWebhook({
          secret,
          body,
          timestamp: request.headers[TIMESTAMP_HEADER] as string | undefined,
          signature: request.headers[SIGNATURE_HEADER] as string | undefined,
        });
        const self = receiver as SmsWebhook;
        if (!verdict.ok) {
          self.refused.push(verdict.reason);
          response.writeHead(401).end();
          return;
        }
        if (self.failWith !== undefined) {
          response.writeHead(self.failWith).end();
          return;
        }
        const sms = JSON.parse(body) as Omit<ReceivedSms, "idempotencyKey">;
        self.received.push({
          ...sms,
          idempotencyKey: request.headers[MESSAGE_ID_HEADER] as string | undefined,
        });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    receiver = new SmsWebhook(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`,
      secret,
    );
    return receiver;
  }

  async untilReceived(to: string, count = 1, timeoutMs = 15_000): Promise<ReceivedSms[]> {
    const mine = () => this.received.filter((sms) => sms.to === to);
    await waitFor(`${count} SMS to ${to}`, async () => mine().length >= count, timeoutMs);
    return mine();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
