/**
 * Message delivery throughput: messages already committed in the message outbox, sent by one
 * Manager's message sender to a local SMTP server (smtp-server, counting what it accepts
 * without parsing it) and to a local SMS webhook; messages per second from the sender's start
 * to the last message marked sent.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger } from "@tjm/platform";
import { SMTPServer } from "smtp-server";
import {
  type Channel,
  createDelivery,
  type DeliverySettings,
} from "../../manager/src/identity/delivery/index.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import { loadMigrations, migrate } from "../../manager/src/platform/migrations.ts";
import type { BenchContext } from "../scenario.ts";
import { dropSchemaAtEnd } from "../shared/database.ts";

export interface ChannelResult {
  channel: Channel;
  messages: number;
  seconds: number;
  perSecond: number;
}

export interface DeliveryResult {
  channels: ChannelResult[];
}

const MESSAGES = 3000;
/** Rows written per transaction while filling the outbox (not measured). */
const ENQUEUE_BATCH = 500;
const DRAIN_TIMEOUT_MS = 180_000;
const WEBHOOK_SECRET = "bench-webhook-secret-0123456789abcdef";

async function smtpSink(context: BenchContext): Promise<{ port: number; accepted: () => number }> {
  let accepted = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    closeTimeout: 100,
    onData(stream, _session, callback) {
      stream.on("data", () => {});
      stream.on("end", () => {
        accepted++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  context.cleanup.defer(
    "stop the delivery bench's SMTP server",
    () => new Promise<void>((done) => server.close(() => done())),
  );
  return { port: (server.server.address() as AddressInfo).port, accepted: () => accepted };
}

async function webhookSink(context: BenchContext): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  context.cleanup.defer("stop the delivery bench's webhook", async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
}

async function untilSent(sql: Sql, channel: Channel): Promise<void> {
  const deadline = performance.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from message_outbox where channel = ${channel} and sent_at is null`;
    if (row?.n === 0) return;
    if (performance.now() > deadline)
      throw new Error(`${row?.n} ${channel} messages still unsent after ${DRAIN_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function benchDelivery(context: BenchContext): Promise<DeliveryResult> {
  const schema = `bench_${context.runId}_delivery`;
  dropSchemaAtEnd(context.admin, schema, context.cleanup);
  const sql = createSql({
    url: context.databaseUrl,
    schema,
    poolMax: 4,
    applicationName: "tjm-bench-delivery",
  });
  context.cleanup.defer("close the delivery bench connection", () => sql.end({ timeout: 5 }));
  await migrate(sql, schema, await loadMigrations());
  const smtp = await smtpSink(context);
  const settings: DeliverySettings = {
    email: {
      kind: "smtp",
      host: "127.0.0.1",
      port: smtp.port,
      tls: "none",
      username: undefined,
      password: undefined,
      fromAddress: "no-reply@bench.example",
      fromName: "TJM",
      timeoutMs: 10_000,
    },
    sms: { kind: "webhook", url: await webhookSink(context), secret: WEBHOOK_SECRET, timeoutMs: 10_000 },
    serviceName: "TJM",
    retry: { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 1000 },
    sendTimeoutMs: 10_000,
    pollMs: 1000,
  };

  const channels: ChannelResult[] = [];
  for (const channel of ["email", "sms"] as const) {
    const delivery = createDelivery(settings, { sql, logger: silentLogger });
    for (let start = 0; start < MESSAGES; start += ENQUEUE_BATCH) {
      await sql.begin(async (tx) => {
        for (let index = start; index < Math.min(MESSAGES, start + ENQUEUE_BATCH); index++) {
          await delivery.enqueueMessage(tx, {
            channel,
            recipient:
              channel === "email"
                ? `reader-${index}@bench.example`
                : `+9370${String(index).padStart(7, "0")}`,
            locale: index % 2 === 0 ? "en" : "fa",
            template: "verification-code",
            params: { code: String(100_000 + index), minutes: 30 },
          });
        }
      });
    }
    await sql`vacuum analyze message_outbox`;
    const started = performance.now();
    delivery.start();
    try {
      await untilSent(sql, channel);
    } finally {
      await delivery.stop();
    }
    const seconds = (performance.now() - started) / 1000;
    context.log(`delivery: ${MESSAGES} ${channel} messages in ${seconds.toFixed(2)} s`);
    channels.push({ channel, messages: MESSAGES, seconds, perSecond: MESSAGES / seconds });
  }
  if (smtp.accepted() < MESSAGES)
    throw new Error(`the SMTP server accepted ${smtp.accepted()} of ${MESSAGES}`);
  return { channels };
}
