import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type NatsServer, startNatsServer, waitFor } from "@tjm/devstack/services";
import { silentLogger } from "@tjm/platform";
import { UUID_PATTERN } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EventEnvelope,
  enqueueOutbox,
  ensureStreams,
  jetStreamPublish,
  OutboxRelay,
} from "../../manager/src/outbox/index.ts";
import type { OutboxRelayOptions } from "../../manager/src/outbox/relay.ts";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

const decoder = new TextDecoder();

interface Fixture {
  sql: Sql;
  schema: string;
  nc: NatsConnection;
  prefix: string;
  stream: string;
  relay(options?: Partial<OutboxRelayOptions>): OutboxRelay;
  close(): Promise<void>;
}

async function fixture(natsUrl: string): Promise<Fixture> {
  const database = await createTestSchema(testServices().databaseUrl);
  const nc = await connect({ servers: natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  const suffix = database.schema.replace(/[^a-z0-9]/g, "");
  const prefix = `test${suffix}`;
  const stream = `EVENTS_${suffix}`;
  await ensureStreams(nc, [{ name: stream, subjects: [`${prefix}.events.>`] }]);
  const publish = jetStreamPublish(nc);
  return {
    sql: database.sql,
    schema: database.schema,
    nc,
    prefix,
    stream,
    relay: (options = {}) =>
      new OutboxRelay({
        sql: options.sql ?? database.sql,
        schema: database.schema,
        subjectPrefix: prefix,
        publisher: () => (nc.isClosed() ? undefined : publish),
        logger: silentLogger,
        pollIntervalMs: 200,
        maxBackoffMs: 500,
        ...options,
      }),
    async close() {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(stream).catch(() => {});
      await nc.close();
      await database.drop();
    },
  };
}

/** Every message in the stream, in stream order. */
async function readStream(f: Fixture): Promise<EventEnvelope[]> {
  const jsm = await jetstreamManager(f.nc);
  const { state } = await jsm.streams.info(f.stream);
  const consumer = await jetstream(f.nc).consumers.get(f.stream);
  const envelopes: EventEnvelope[] = [];
  if (state.messages === 0) return envelopes;
  const messages = await consumer.consume();
  for await (const message of messages) {
    envelopes.push(JSON.parse(decoder.decode(message.data)));
    if (message.info.pending === 0) break;
  }
  await messages.close();
  return envelopes;
}

async function unpublished(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from outbox where published_at is null`;
  return row?.n ?? 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the outbox relay", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture(testServices().natsUrl);
  });
  afterAll(() => f?.close());

  it("publishes committed rows in id order as envelopes whose id and Nats-Msg-Id are the row's message_id, then marks them", async () => {
    await f.sql.begin(async (tx) => {
      for (let seq = 0; seq < 5; seq++) await enqueueOutbox(tx, "job.created", { jobId: "j", seq });
    });
    const relay = f.relay();
    await relay.start();
    await waitFor("rows published", async () => (await unpublished(f.sql)) === 0);
    await relay.stop();
    const envelopes = await readStream(f);
    expect(envelopes.map((e) => e.data.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(envelopes[0]).toMatchObject({
      kind: "job.created",
      id: expect.stringMatching(UUID_PATTERN),
      occurredAt: expect.any(String),
    });
    const ids = (await f.sql<{ messageId: string }[]>`select message_id from outbox order by id`).map(
      (row) => row.messageId,
    );
    expect(envelopes.map((e) => e.id)).toEqual(ids);
    const jsm = await jetstreamManager(f.nc);
    const headers = await Promise.all(
      ids.map(async (_, index) =>
        (await jsm.streams.getMessage(f.stream, { seq: index + 1 }))?.header.get("Nats-Msg-Id"),
      ),
    );
    expect(headers).toEqual(ids);
  });

  it("publishes every committed row at least once, in per-job order, under 32 writers while relays are killed and restarted", async () => {
    const jobs = Array.from({ length: 8 }, (_, i) => `job-${i}`);
    const committed: string[] = [];
    let writing = true;

    const writer = async () => {
      for (let t = 0; t < 12; t++) {
        const jobId = jobs[Math.floor(Math.random() * jobs.length)] as string;
        await f.sql.begin(async (tx) => {
          // Changes of one job serialise on its row in the real system; an advisory lock stands in.
          await tx`select pg_advisory_xact_lock(hashtext(${`${f.schema}:${jobId}`}))`;
          const [row] = await tx<{ n: number }[]>`
            select count(*)::int as n from outbox where kind = 'test.step' and payload->>'jobId' = ${jobId}`;
          const rows = 1 + Math.floor(Math.random() * 3);
          for (let r = 0; r < rows; r++)
            await enqueueOutbox(tx, "test.step", { jobId, seq: (row?.n ?? 0) + r });
          // Transactions of random length: some commit long after rows with higher ids.
          await sleep(Math.random() * 40);
        });
        committed.push(jobId);
      }
    };

    // Two "replicas", each repeatedly started and then stopped gracefully or killed: its
    // database connections cut mid-batch, so a half-published batch rolls back.
    const replica = async () => {
      while (writing) {
        const client = createSql({ url: testServices().databaseUrl, schema: f.schema, poolMax: 2 });
        const relay = f.relay({ batchSize: 7, sql: client });
        await relay.start();
        await sleep(Math.random() * 60);
        if (Math.random() < 0.5) {
          await client.end({ timeout: 0 });
          await relay.stop();
        } else {
          await relay.stop();
          await client.end();
        }
      }
    };
    // postgres.js leaves the type lookup of a connection cut while it starts without a
    // handler; for a client killed on purpose that rejection is expected, anything else is not.
    const expectedCuts = (reason: unknown) => {
      const code = (reason as { code?: string } | null)?.code;
      if (code !== "CONNECTION_DESTROYED" && code !== "CONNECTION_ENDED") throw reason;
    };
    process.on("unhandledRejection", expectedCuts);
    const chaos = Promise.all([replica(), replica()]).finally(() =>
      setTimeout(() => process.off("unhandledRejection", expectedCuts), 1000),
    );
    await Promise.all(Array.from({ length: 32 }, writer));
    writing = false;
    await chaos;

    const survivor = f.relay();
    await survivor.start();
    await waitFor("every row published", async () => (await unpublished(f.sql)) === 0);
    await survivor.stop();

    const rows = await f.sql<{ messageId: string }[]>`select message_id from outbox where kind = 'test.step'`;
    const seen = new Map<string, EventEnvelope>();
    for (const envelope of await readStream(f))
      if (envelope.kind === "test.step" && !seen.has(envelope.id)) seen.set(envelope.id, envelope);
    expect(new Set(seen.keys())).toEqual(new Set(rows.map((row) => row.messageId)));

    const lastSeq = new Map<string, number>();
    for (const envelope of seen.values()) {
      const jobId = envelope.data.jobId as string;
      const seq = envelope.data.seq as number;
      expect(seq, `order of ${jobId}`).toBe((lastSeq.get(jobId) ?? -1) + 1);
      lastSeq.set(jobId, seq);
    }
    expect(committed.length).toBe(32 * 12);
  }, 120_000);
});

describe("rows published at once by whoever committed them (leases)", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture(testServices().natsUrl);
  });
  afterAll(() => f?.close());

  const commit = (jobId: string, count: number) =>
    f.sql.begin(async (tx) => {
      const rows = [];
      for (let seq = 0; seq < count; seq++) rows.push(await enqueueOutbox(tx, "job.created", { jobId, seq }));
      return rows;
    });

  it("are published and marked without a batch, and a batch after them publishes nothing", async () => {
    const marked: string[] = [];
    const relay = f.relay({ published: (rows) => marked.push(...rows.map((row) => row.messageId)) });
    const rows = await commit("at-once", 3);
    await relay.publishCommitted(rows);
    expect(await unpublished(f.sql)).toBe(0);
    expect(marked).toEqual(rows.map((row) => row.messageId));
    expect(await relay.publishBatch()).toBe(0);
    const envelopes = (await readStream(f)).filter((envelope) => envelope.data.jobId === "at-once");
    expect(envelopes.map((envelope) => [envelope.id, envelope.data.seq])).toEqual(
      rows.map((row, seq) => [row.messageId, seq]),
    );
  });

  it("beside a batch that read the same rows first, are stored once each and counted as published once", async () => {
    const marked: string[] = [];
    const published = (rows: readonly { messageId: string }[]) =>
      marked.push(...rows.map((row) => row.messageId));
    const publish = jetStreamPublish(f.nc);
    let batchRead: () => void = () => {};
    const read = new Promise<void>((resolve) => {
      batchRead = resolve;
    });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The batch's publishes wait until the rows were published and marked at once.
    const batch = f.relay({
      published,
      publisher: () => async (subject, payload, messageId) => {
        batchRead();
        await released;
        await publish(subject, payload, messageId);
      },
    });
    const rows = await commit("raced", 5);
    const batching = batch.publishBatch();
    await read;
    await f.relay({ published }).publishCommitted(rows);
    expect(await unpublished(f.sql)).toBe(0);
    release();
    expect(await batching).toBe(5);
    expect(marked.toSorted()).toEqual(rows.map((row) => row.messageId).toSorted());
    const envelopes = (await readStream(f)).filter((envelope) => envelope.data.jobId === "raced");
    expect(envelopes.map((envelope) => envelope.data.seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it("that cannot be published at once stay for the batches, and the relay is woken for them", async () => {
    const publish = jetStreamPublish(f.nc);
    let failures = 1;
    const relay = f.relay({
      publisher: () => async (subject, payload, messageId) => {
        if (failures-- > 0) throw new Error("no responders");
        await publish(subject, payload, messageId);
      },
      pollIntervalMs: 60_000,
    });
    await relay.start();
    // Its first batch found nothing; it now sleeps for a minute unless woken.
    await sleep(300);
    // Two leases' rows: independent of each other, as publishCommitted requires.
    const rows = [...(await commit("later-1", 1)), ...(await commit("later-2", 1))];
    await relay.publishCommitted(rows);
    await waitFor("rows published by the relay", async () => (await unpublished(f.sql)) === 0, 10_000);
    await relay.stop();
    const stored = (await readStream(f)).map((envelope) => envelope.id);
    for (const row of rows) expect(stored.filter((id) => id === row.messageId)).toHaveLength(1);
  });
});

describe("the outbox relay while NATS does not answer", () => {
  let nats: NatsServer;
  let f: Fixture;
  beforeAll(async () => {
    nats = await startNatsServer();
    f = await fixture(nats.url);
  });
  afterAll(async () => {
    nats?.process.kill("SIGCONT");
    await f?.close();
    await nats?.stop();
  });

  it("keeps the rows in PostgreSQL and drains them once NATS is back", async () => {
    const relay = f.relay();
    await relay.start();
    nats.process.kill("SIGSTOP");
    try {
      await f.sql.begin(async (tx) => {
        for (let seq = 0; seq < 20; seq++) await enqueueOutbox(tx, "job.created", { jobId: "paused", seq });
      });
      await sleep(1500);
      expect(await unpublished(f.sql)).toBe(20);
    } finally {
      nats.process.kill("SIGCONT");
    }
    await waitFor("rows drained", async () => (await unpublished(f.sql)) === 0, 30_000);
    await relay.stop();
    const seqs = [...new Map((await readStream(f)).map((e) => [e.id, e.data.seq])).values()];
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i));
  }, 60_000);
});
