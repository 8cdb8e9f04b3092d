/**
 * Outbox message ids never repeat: a database restored from an earlier dump, or dropped and
 * re-created, on the same subject prefix within JetStream's two-minute duplicate window still
 * delivers its next lease, cancel and SSE event. With the bigint row id as Nats-Msg-Id, the
 * stream drops each of them as a repeat of the message the first database sent under that id.
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import { deleteStreams } from "@tjm/devstack/streams";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createSql, type Sql } from "../../manager/src/platform/db.ts";
import { loadMigrations, migrate } from "../../manager/src/platform/migrations.ts";
import { createDatabase, dumpSchema, restoreDump, type TestDatabase } from "../harness/databases.ts";
import { createTestSchema, TestManager, testServices } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { subscribeEvents } from "../harness/sse.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Everything a test made, undone after it in reverse order. */
const undo: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of undo.splice(0).reverse()) await step();
});

async function database(): Promise<TestDatabase> {
  const created = await createDatabase();
  undo.push(created.drop);
  return created;
}

function prefix(name: string): string {
  const subjectPrefix = `${inject("schemaPrefix")}${name}`;
  undo.push(() => deleteStreams(testServices().natsUrl, subjectPrefix));
  return subjectPrefix;
}

const running = new Set<TestManager>();

async function manager(options: Parameters<typeof TestManager.start>[0]): Promise<TestManager> {
  const started = await TestManager.start(options);
  running.add(started);
  undo.push(() => stop(started));
  return started;
}

/** Stops a Manager gracefully, leaving the prefix's streams (and the Workers' consumers) in place. */
async function stop(manager: TestManager): Promise<void> {
  if (running.delete(manager)) await manager.close({ keepStreams: true });
}

/** Outbox rows above `afterId`: bigint id → message id. */
async function outboxRows(sql: Sql, afterId = "0"): Promise<Map<string, string>> {
  const rows = await sql<{ id: string; messageId: string }[]>`
    select id::text as id, message_id from outbox where id > ${afterId}::bigint order by id`;
  return new Map(rows.map((row) => [row.id, row.messageId]));
}

/** The ids both maps hold, each with its two message ids. */
function sameIds(first: Map<string, string>, second: Map<string, string>) {
  return [...first].flatMap(([id, messageId]) => {
    const other = second.get(id);
    return other === undefined ? [] : [{ id, first: messageId, second: other }];
  });
}

async function worker(on: TestManager): Promise<ProtocolWorker> {
  const started = await ProtocolWorker.start(on);
  undo.push(() => started.stop());
  return started;
}

/**
 * A job leased to `worker`, accepted, cancelled and confirmed, watched on the SSE stream;
 * returns the SSE ids of the job's events.
 */
async function leaseAndCancel(on: TestManager, worker: ProtocolWorker, projectId: string): Promise<string[]> {
  const stream = await subscribeEvents(on, "?kinds=job.created,job.updated");
  try {
    const jobId = await on.submitJob(sampleSubmission(projectId));
    const lease = await worker.nextLease(jobId);
    await worker.report("accepted", lease);
    await on.untilJob(jobId, "RUNNING");
    await on.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    const cancel = await worker.nextCommand("cancel", lease.attemptId);
    expect(cancel.fencingToken).toBe(lease.fencingToken);
    await worker.report("cancelled", lease);
    await on.untilJob(jobId, "CANCELLED");

    const ofJob = () =>
      stream
        .events()
        .map((event) => ({ id: event.id, envelope: JSON.parse(event.data ?? "{}") }))
        .filter(({ envelope }) => envelope.data.jobId === jobId);
    await waitFor("the job's events on the SSE stream", async () =>
      ofJob().some(({ envelope }) => envelope.data.to === "CANCELLED"),
    );
    const events = ofJob();
    expect(events.map(({ envelope }) => [envelope.kind, envelope.data.to])).toEqual([
      ["job.created", undefined],
      ["job.updated", "RUNNING"],
      ["job.updated", "CANCEL_REQUESTED"],
      ["job.updated", "CANCELLED"],
    ]);
    for (const { id, envelope } of events) {
      expect(id).toMatch(UUID);
      expect(envelope.id).toBe(id);
    }
    return events.map(({ id }) => id as string);
  } finally {
    await stream.close();
  }
}

describe("outbox message ids", () => {
  it("migration 0005 gives every existing outbox row its own UUID and the database one installation id", async () => {
    const { schema, sql, drop } = await createTestSchema(testServices().databaseUrl);
    undo.push(drop);
    const migrations = await loadMigrations();
    const fresh = `${schema}_upgraded`;
    const upgrading = createSql({ url: testServices().databaseUrl, schema: fresh, poolMax: 2 });
    undo.push(async () => {
      await upgrading`drop schema if exists ${upgrading(fresh)} cascade`;
      await upgrading.end();
    });
    await migrate(upgrading, fresh, migrations.slice(0, 4));
    // Rows as a Manager of that schema wrote them (no message_id yet).
    for (let seq = 0; seq < 3; seq++)
      await upgrading`insert into outbox (kind, subject, payload)
        values ('job.created', 'events.job.created', ${upgrading.json({ seq })})`;
    await migrate(upgrading, fresh, migrations);

    const rows = await upgrading<{ messageId: string }[]>`select message_id from outbox order by id`;
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.messageId).toMatch(UUID);
    expect(new Set(rows.map((row) => row.messageId)).size).toBe(3);

    const [upgraded] = await upgrading<{ id: string }[]>`select id from installation`;
    const [other] = await sql<{ id: string }[]>`select id from installation`;
    expect(upgraded?.id).toMatch(UUID);
    expect(other?.id).toMatch(UUID);
    expect(upgraded?.id).not.toBe(other?.id);
    await expect(upgrading`insert into installation default values`).rejects.toThrow(/duplicate key/);
  });

  it("a database restored from an earlier dump, on the same prefix within the duplicate window, still delivers its next lease, cancel and SSE event", async () => {
    const subjectPrefix = prefix("restored");
    const original = await database();
    const { schema, sql } = await createTestSchema(original.url);
    undo.push(() => sql.end());
    const first = await manager({ databaseUrl: original.url, schema, subjectPrefix });
    const { projectId } = await first.createProject();
    const enrolled = await worker(first);

    // Early: the project and the Worker are in it, what follows is not.
    const [dumped] = await sql<{ maxId: string }[]>`select coalesce(max(id), 0)::text as max_id from outbox`;
    const dump = await dumpSchema(original, schema);
    undo.push(dump.remove);
    const before = await leaseAndCancel(first, enrolled, projectId);
    const sentFirst = await outboxRows(sql, dumped?.maxId);
    await stop(first);

    const restored = await database();
    await restoreDump(restored, dump.file);
    const second = await manager({ databaseUrl: restored.url, schema, subjectPrefix });
    const after = await leaseAndCancel(second, enrolled, projectId);
    const sentSecond = await outboxRows(second.sql, dumped?.maxId);

    // The restored database handed out the bigint ids the first had just published; the
    // message ids, the SSE ids among them, are new.
    const reused = sameIds(sentFirst, sentSecond);
    expect(reused.length).toBeGreaterThanOrEqual(5);
    for (const row of reused) expect(row.second, `row ${row.id}`).not.toBe(row.first);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
  }, 90_000);

  it("a database dropped and re-created, on the same prefix within the duplicate window, still delivers its next lease, cancel and SSE event", async () => {
    const subjectPrefix = prefix("recreated");
    const shared = await database();
    const schema = `${inject("schemaPrefix")}recreated`;
    const migrated = async () => {
      const sql = createSql({ url: shared.url, schema, poolMax: 2 });
      await migrate(sql, schema, await loadMigrations());
      await sql.end();
    };

    await migrated();
    const first = await manager({ databaseUrl: shared.url, schema, subjectPrefix });
    const before = await leaseAndCancel(first, await worker(first), (await first.createProject()).projectId);
    const sentFirst = await outboxRows(first.sql);
    await stop(first);

    await shared.recreate();
    await migrated();
    const second = await manager({ databaseUrl: shared.url, schema, subjectPrefix });
    const after = await leaseAndCancel(
      second,
      await worker(second),
      (await second.createProject()).projectId,
    );
    const sentSecond = await outboxRows(second.sql);

    const reused = sameIds(sentFirst, sentSecond);
    expect(reused.length).toBeGreaterThanOrEqual(5);
    for (const row of reused) expect(row.second, `row ${row.id}`).not.toBe(row.first);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
  }, 90_000);
});
