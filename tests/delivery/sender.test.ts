/**
 * The message sender on real services: PostgreSQL, a real SMTP server and a webhook receiver
 * on loopback. What was sent is read from them, never from a mock: e-mails (HTML and text,
 * Message-ID, right to left in Persian), SMS (signed, idempotency key), retries through a
 * refusing and a vanished SMTP server, permanent refusals, expiry, and the code deleted from
 * the outbox once sent. Every log line the sender wrote is kept and none holds a code.
 */
import { freePort } from "@tjm/devstack/services";
import { createLogger } from "@tjm/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChannelNotConfiguredError,
  createDelivery,
  type Delivery,
  type DeliverySettings,
  signWebhook,
} from "../../manager/src/identity/delivery/index.ts";
import type { Sql } from "../../manager/src/platform/db.ts";
import { Mailbox } from "../harness/mailbox.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";
import { SmsWebhook } from "../harness/sms-webhook.ts";

const WEBHOOK_SECRET = "sms-webhook-secret-for-tests-0123456789";
const FROM = "no-reply@tjm.example";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: Sql;
let mailbox: Mailbox;
let webhook: SmsWebhook;
let delivery: Delivery;
const logLines: string[] = [];
const outcomes: string[] = [];
/** Every code a test sends: none may appear in a log line. */
const codes: string[] = [];

function settings(overrides: Partial<DeliverySettings> = {}): DeliverySettings {
  return {
    email: {
      kind: "smtp",
      host: "127.0.0.1",
      port: mailbox.port,
      tls: "none",
      username: undefined,
      password: undefined,
      fromAddress: FROM,
      fromName: "TJM",
      timeoutMs: 2000,
    },
    sms: { kind: "webhook", url: webhook.url, secret: WEBHOOK_SECRET, timeoutMs: 2000 },
    serviceName: "TJM",
    retry: { maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 400 },
    sendTimeoutMs: 2000,
    pollMs: 50,
    ...overrides,
  };
}

const logger = createLogger("debug", (line) => logLines.push(line));

/** A fresh code per test, remembered for the log check. */
function newCode(): string {
  const code = String(100_000 + Math.floor(Math.random() * 900_000));
  codes.push(code);
  return code;
}

async function row(id: string) {
  const [found] = await sql<
    {
      sentAt: Date | null;
      failedAt: Date | null;
      failureReason: string | null;
      attempts: number;
      params: unknown;
      body: unknown;
    }[]
  >`select sent_at, failed_at, failure_reason, attempts, params, body from message_outbox where id = ${id}`;
  return found;
}

async function untilRow(id: string, done: (r: NonNullable<Awaited<ReturnType<typeof row>>>) => boolean) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const current = await row(id);
    if (current && done(current)) return current;
    if (Date.now() > deadline) throw new Error(`message ${id}: ${JSON.stringify(current)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
  sql = schema.sql;
  // Restarted on its port later: one below the ephemeral range, which no outbound connection takes meanwhile.
  mailbox = await Mailbox.start(await freePort());
  webhook = await SmsWebhook.start(WEBHOOK_SECRET);
  delivery = createDelivery(settings(), {
    sql,
    logger,
    outcome: (channel, outcome) => outcomes.push(`${channel}:${outcome}`),
  });
  delivery.start();
});

afterAll(async () => {
  await delivery?.stop();
  await mailbox?.stop();
  await webhook?.close();
  await schema?.drop();
});

describe("e-mail over SMTP", () => {
  it("sends a code as HTML and text, with a Message-ID from the row id, and deletes the code once sent", async () => {
    const code = newCode();
    const id = await sql.begin((tx) =>
      delivery.enqueueMessage(tx, {
        channel: "email",
        recipient: "reader@example.test",
        locale: "en",
        template: "verification-code",
        params: { code, minutes: 10 },
      }),
    );
    delivery.wake();
    const [mail] = await mailbox.untilReceived("reader@example.test");
    expect(mail?.parsed.messageId).toBe(`<${id}@tjm.example>`);
    expect(mail?.parsed.subject).toBe("Your TJM verification code");
    expect(mail?.parsed.text).toContain(`Your code: ${code}`);
    expect(mail?.parsed.text).toContain("The code works for 10 minutes and only once.");
    expect(mail?.parsed.html).toContain('<html lang="en" dir="ltr">');
    expect(mail?.parsed.html).toContain(code);
    expect(mail?.raw).toMatch(/^Auto-Submitted: auto-generated/m);
    const sent = await untilRow(id, (r) => r.sentAt !== null);
    expect(sent).toMatchObject({ attempts: 1, params: null, body: null, failedAt: null });
  });

  it("renders Persian right to left with the Arabic-script fonts, a Gregorian date and Latin digits", async () => {
    const when = new Date("2026-03-21T08:05:00Z");
    const id = await sql.begin((tx) =>
      delivery.enqueueMessage(tx, {
        channel: "email",
        recipient: "persian@example.test",
        locale: "fa",
        template: "password-changed",
        params: { when },
      }),
    );
    delivery.wake();
    const [mail] = await mailbox.untilReceived("persian@example.test");
    expect(mail?.parsed.subject).toBe("گذرواژهٔ TJM شما تغییر کرد");
    expect(mail?.parsed.html).toContain('<html lang="fa" dir="rtl">');
    expect(mail?.parsed.html).toContain("Noto Naskh Arabic");
    // 21 March 2026 in the Gregorian calendar (1 Farvardin 1405 in the Persian one), Latin digits.
    expect(mail?.parsed.text).toMatch(/21 مارس 2026/);
    expect(mail?.parsed.text).not.toMatch(/[۰-۹]/);
    // Not a code: the notice is kept after it is sent.
    const sent = await untilRow(id, (r) => r.sentAt !== null);
    expect(sent?.body).not.toBeNull();
  });

  it("retries while the server answers 451 and while it is gone (connection refused), and sends once it is back", async () => {
    mailbox.mode = { kind: "refuse", code: 451 };
    const code = newCode();
    const id = await sql.begin((tx) =>
      delivery.enqueueMessage(tx, {
        channel: "email",
        recipient: "patient@example.test",
        locale: "ps",
        template: "mfa-code",
        params: { code, minutes: 5 },
      }),
    );
    delivery.wake();
    const refused = await untilRow(id, (r) => r.attempts >= 2);
    expect(refused).toMatchObject({ sentAt: null, failedAt: null, failureReason: "smtp reply 451" });
    await mailbox.stop();
    mailbox.mode = { kind: "accept" };
    const gone = await untilRow(id, (r) => r.attempts >= 3 && r.failureReason !== "smtp reply 451");
    expect(gone.failureReason).toMatch(/^smtp E/);
    await mailbox.restart();
    const [mail] = await mailbox.untilReceived("patient@example.test");
    expect(mail?.parsed.messageId).toBe(`<${id}@tjm.example>`);
    expect(mail?.parsed.html).toContain('<html lang="ps" dir="rtl">');
    expect(mail?.parsed.text).toContain(code);
    const sent = await untilRow(id, (r) => r.sentAt !== null);
    expect(sent).toMatchObject({ failedAt: null, params: null, body: null });
    expect(outcomes).toContain("email:retried");
  });

  it("fails a message the server refuses for good (550) at once, with the reason, a metric and a log line", async () => {
    mailbox.mode = { kind: "refuse", code: 550 };
    const code = newCode();
    const id = await sql.begin((tx) =>
      delivery.enqueueMessage(tx, {
        channel: "email",
        recipient: "nobody@example.test",
        locale: "en",
        template: "recovery-code",
        params: { code, minutes: 15 },
      }),
    );
    delivery.wake();
    const failed = await untilRow(id, (r) => r.failedAt !== null);
    mailbox.mode = { kind: "accept" };
    expect(failed).toMatchObject({ attempts: 1, failureReason: "smtp reply 550", params: null, body: null });
    expect(outcomes).toContain("email:failed");
    const line = logLines
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === "message failed" && l.messageId === id);
    expect(line).toMatchObject({
      level: "warn",
      reason: "smtp reply 550",
      permanent: true,
      channel: "email",
    });
  });

  it("fails a code that expired before it could be sent, deleting it", async () => {
    mailbox.mode = { kind: "refuse", code: 421 };
    const id = await sql.begin((tx) =>
      delivery.enqueueMessage(tx, {
        channel: "email",
        recipient: "late@example.test",
        locale: "fa-AF",
        template: "verification-code",
        params: { code: newCode(), minutes: 1 },
      }),
    );
    delivery.wake();
    await untilRow(id, (r) => r.attempts >= 1);
    await sql`update message_outbox set expires_at = now() - interval '1 second' where id = ${id}`;
    const expired = await untilRow(id, (r) => r.failedAt !== null);
    mailbox.mode = { kind: "accept" };
    expect(expired).toMatchObject({
      failureReason: "expired before it could be sent",
      params: null,
      body: null,
    });
    expect(outcomes).toContain("email:expired");
  });
});

describe("SMS through the webhook", () => {
  it("posts a signed request the receiver verifies, with the row id as its idempotency key, retrying a 503", async () => {
    webhook.failWith = 503;
    const code = newCode();
    const id = await sql.begin((tx) =>
      delivery.enqueueMessage(tx, {
        channel: "sms",
        recipient: "+93700000001",
        locale: "fa-AF",
        template: "verification-code",
        params: { code, minutes: 10 },
      }),
    );
    delivery.wake();
    await untilRow(id, (r) => r.attempts >= 2);
    webhook.failWith = undefined;
    const [sms] = await webhook.untilReceived("+93700000001");
    expect(sms).toMatchObject({ id, idempotencyKey: id, locale: "fa-AF", template: "verification-code" });
    expect(sms?.text).toContain(code);
    expect(sms?.text).toContain("کود تصدیق TJM");
    expect(webhook.refused).toEqual([]);
    const sent = await untilRow(id, (r) => r.sentAt !== null);
    expect(sent).toMatchObject({ params: null, body: null });
  });

  it("the receiver refuses a request signed with another secret, a tampered body and a stale timestamp", async () => {
    const body = JSON.stringify({
      id: "x",
      to: "+93700000009",
      text: "hello",
      locale: "en",
      template: "mfa-code",
    });
    const now = Math.floor(Date.now() / 1000);
    const post = async (signedBody: string, sentBody: string, timestamp: number, secret = WEBHOOK_SECRET) =>
      fetch(webhook.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "tjm-timestamp": String(timestamp),
          "tjm-signature": await signWebhook(secret, timestamp, signedBody),
        },
        body: sentBody,
      });
    expect((await post(body, body, now, "another-secret-of-at-least-32-characters")).status).toBe(401);
    expect((await post(body, body.replace("hello", "HELLO"), now)).status).toBe(401);
    expect((await post(body, body, now - 600)).status).toBe(401);
    expect(webhook.refused).toEqual(["bad-signature", "bad-signature", "stale"]);
    webhook.refused.length = 0;
    expect(webhook.received.filter((sms) => sms.to === "+93700000009")).toEqual([]);
  });

  it("fails a message the gateway refuses (400) without retrying it", async () => {
    webhook.failWith = 400;
    const id = await sql.begin((tx) =>
      delivery.enqueueMessage(tx, {
        channel: "sms",
        recipient: "+93700000002",
        locale: "ps",
        template: "mfa-code",
        params: { code: newCode(), minutes: 10 },
      }),
    );
    delivery.wake();
    const failed = await untilRow(id, (r) => r.failedAt !== null);
    webhook.failWith = undefined;
    expect(failed).toMatchObject({ attempts: 1, failureReason: "webhook status 400" });
  });
});

describe("transports that are not configured", () => {
  it("refuse the message at enqueue and write nothing", async () => {
    const emailOnly = createDelivery(settings({ sms: { kind: "none" } }), { sql, logger });
    const before = await sql`select count(*)::int as n from message_outbox`;
    await expect(
      sql.begin((tx) =>
        emailOnly.enqueueMessage(tx, {
          channel: "sms",
          recipient: "+93700000003",
          locale: "en",
          template: "mfa-code",
          params: { code: newCode(), minutes: 10 },
        }),
      ),
    ).rejects.toThrow(ChannelNotConfiguredError);
    expect(await sql`select count(*)::int as n from message_outbox`).toEqual(before);
  });

  it("the log transport, when configured, records that a message was not sent, without its text", async () => {
    const lines: string[] = [];
    const logged = createDelivery(settings({ email: { kind: "log" }, sms: { kind: "none" } }), {
      sql,
      logger: createLogger("info", (line) => lines.push(line)),
    });
    // Its own rows only: the shared sender would take them too.
    await delivery.stop();
    logged.start();
    const code = newCode();
    const id = await sql.begin((tx) =>
      logged.enqueueMessage(tx, {
        channel: "email",
        recipient: "logged@example.test",
        locale: "en",
        template: "recovery-code",
        params: { code, minutes: 10 },
      }),
    );
    logged.wake();
    await untilRow(id, (r) => r.sentAt !== null);
    await logged.stop();
    delivery = createDelivery(settings(), { sql, logger });
    delivery.start();
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.messageId === id);
    expect(entry).toMatchObject({
      msg: "message not sent: the log transport only records it",
      recipient: "l***@example.test",
    });
    logLines.push(...lines);
  });
});

describe("logs", () => {
  it("no line the sender wrote holds a code", () => {
    expect(logLines.length).toBeGreaterThan(3);
    for (const code of codes) {
      for (const line of logLines) expect(line).not.toContain(code);
    }
  });
});
