/**
 * At least once across a crash: a message committed with its cause is sent by the next Manager
 * when the one that was sending it is killed (SIGKILL, the whole process group) in the middle
 * of the SMTP conversation. Real Manager processes: the one killed on Node (`npm run manager`),
 * the next on Deno (`npm run manager:deno`), which runs the same sender; a real SMTP server.
 * Neither Manager's output holds the code.
 */
import { startManagerProcess } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { deleteStreams } from "@tjm/devstack/streams";
import { silentLogger } from "@tjm/platform";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { createDelivery } from "../../manager/src/identity/delivery/index.ts";
import { Mailbox } from "../harness/mailbox.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let mailbox: Mailbox;
const subjectPrefix = `${inject("schemaPrefix")}crash`;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
  mailbox = await Mailbox.start();
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await mailbox?.stop();
  await deleteStreams(testServices().natsUrl, subjectPrefix);
  await schema?.drop();
});

/** Writes messages as a feature of another process would; never sends (not started). */
const enqueueOnly = () =>
  createDelivery(
    {
      email: { kind: "log" },
      sms: { kind: "none" },
      serviceName: "TJM",
      retry: { maxAttempts: 8, baseDelayMs: 100, maxDelayMs: 100 },
      sendTimeoutMs: 1500,
      pollMs: 100,
    },
    { sql: schema.sql, logger: silentLogger },
  );

function managerEnv(): Record<string, string> {
  return {
    DATABASE_URL: testServices().databaseUrl,
    DATABASE_SCHEMA: schema.schema,
    NATS_URL: testServices().natsUrl,
    NATS_SUBJECT_PREFIX: subjectPrefix,
    NATS_AUTH: "none",
    OIDC_ISSUER_URL: "http://127.0.0.1:1",
    PROVIDER_ENABLED: "false",
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
    LOG_LEVEL: "debug",
    ...mailbox.managerEnv(),
    // A claimed message is taken again 2 × this after its sender died.
    MESSAGE_SEND_TIMEOUT_MS: "1500",
    MESSAGE_POLL_MS: "100",
  };
}

it("a message committed with its cause is sent by the next Manager (on Deno) after the one sending it was killed mid-send", async () => {
  mailbox.mode = { kind: "hold" };
  const first = await startManagerProcess("node", managerEnv());
  stops.push(() => first.kill());

  // The cause (an account) and its message in one transaction, as a feature writes them.
  const code = "739164";
  const id = await schema.sql.begin(async (tx) => {
    await tx`insert into accounts (email) values ('crash@example.test')`;
    return enqueueOnly().enqueueMessage(tx, {
      channel: "email",
      recipient: "crash@example.test",
      locale: "en",
      template: "verification-code",
      params: { code, minutes: 10 },
    });
  });

  await mailbox.untilHolding();
  await first.kill();
  mailbox.dropHeld();
  const [claimed] = await schema.sql<{ attempts: number; sentAt: Date | null }[]>`
    select attempts, sent_at from message_outbox where id = ${id}`;
  expect(claimed).toEqual({ attempts: 1, sentAt: null });

  // The Deno Manager runs the same sender (nodemailer works there with its permissions).
  const second = await startManagerProcess("deno", managerEnv());
  stops.push(() => second.stop());
  const [mail] = await mailbox.untilReceived("crash@example.test");
  expect(mail?.parsed.messageId).toBe(`<${id}@tjm.example>`);
  expect(mail?.parsed.text).toContain(code);
  // The mailbox has the message once the SMTP server accepted it; the row is marked sent after
  // the Manager read that answer.
  const sent = async () =>
    (
      await schema.sql<{ attempts: number; body: unknown }[]>`
        select attempts, body from message_outbox where id = ${id} and sent_at is not null`
    )[0];
  await expect.poll(sent, { timeout: 10_000 }).toEqual({ attempts: 2, body: null });

  for (const output of [first.output(), second.output()]) {
    expect(output).toContain('"msg":"manager listening"');
    expect(output).not.toContain(code);
  }
  // The log line follows the row's update through a pipe: it can arrive after the query above.
  await expect
    .poll(() => second.output(), { timeout: 10_000 })
    .toContain(`"msg":"message sent","service":"manager","messageId":"${id}"`);
}, 60_000);
