/**
 * Outbox relay throughput: rows already committed in the outbox, drained by one relay into
 * a JetStream stream on the real NATS; rows per second from start to the last row marked.
 */
import { connect } from "@nats-io/transport-node";
import { deleteStreams } from "@tjm/devstack/streams";
import { silentLogger } from "@tjm/platform";
import { streams } from "@tjm/protocol";
import {
  ensureStreams,
  jetStreamPublish,
  OutboxRelay,
  outboxInsert,
} from "../../manager/src/outbox/index.ts";
import { createSql } from "../../manager/src/platform/db.ts";
import { loadMigrations, migrate } from "../../manager/src/platform/migrations.ts";
import type { BenchContext } from "../scenario.ts";
import { dropSchemaAtEnd } from "../shared/database.ts";

export interface RelayResult {
  rows: number;
  seconds: number;
  perSecond: number;
}

const RELAY_ROWS = 50_000;
const DRAIN_TIMEOUT_MS = 120_000;

export async function benchRelay(context: BenchContext): Promise<RelayResult> {
  const schema = `bench_${context.runId}_relay`;
  const prefix = schema;
  dropSchemaAtEnd(context.admin, schema, context.cleanup);
  const sql = createSql({ url: context.databaseUrl, schema, poolMax: 4, applicationName: "tjm-bench-relay" });
  context.cleanup.defer("close the relay bench connection", () => sql.end({ timeout: 5 }));
  await migrate(sql, schema, await loadMigrations());

  const nc = await connect({ servers: context.natsUrl });
  context.cleanup.defer("delete the relay bench streams and disconnect", async () => {
    await deleteStreams(nc, prefix);
    await nc.close();
  });
  await ensureStreams(nc, Object.values(streams(prefix)));

  // A realistic payload: what job.created carries.
  await sql`${outboxInsert(sql, {
    kind: "job.created",
    payload: sql`jsonb_build_object('jobId', gen_random_uuid(), 'organizationId', gen_random_uuid(),
                                    'projectId', gen_random_uuid(), 'state', 'QUEUED', 'workerPool', 'cpu',
                                    'priority', 0, 'attemptId', gen_random_uuid(), 'occurredAt', now())`,
    from: sql`generate_series(1, ${RELAY_ROWS})`,
  })}`;
  await sql`vacuum analyze outbox`;

  const publish = jetStreamPublish(nc);
  const relay = new OutboxRelay({
    sql,
    schema,
    subjectPrefix: prefix,
    publisher: () => publish,
    logger: silentLogger,
  });
  const started = performance.now();
  await relay.start();
  try {
    const deadline = started + DRAIN_TIMEOUT_MS;
    for (;;) {
      const [row] = await sql<
        { n: number }[]
      >`select count(*)::int as n from outbox where published_at is null`;
      if (row?.n === 0) break;
      if (performance.now() > deadline)
        throw new Error(`${row?.n} rows still unpublished after ${DRAIN_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await relay.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  context.log(`relay: ${RELAY_ROWS} rows in ${seconds.toFixed(2)} s`);
  return { rows: RELAY_ROWS, seconds, perSecond: RELAY_ROWS / seconds };
}
