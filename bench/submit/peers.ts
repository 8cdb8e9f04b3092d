/**
 * References on the same PostgreSQL: pg-boss send() (a mature Postgres queue doing the same
 * "store one job" work) and the raw ceiling of one-row INSERT transactions.
 */
import { randomUUID } from "node:crypto";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import PgBoss from "pg-boss";
import postgres from "postgres";
import type { BenchContext } from "../scenario.ts";
import { dropSchemaAtEnd } from "../shared/database.ts";
import { type Contender, closedLoop } from "../shared/load.ts";

const QUEUE = "bench";

/** The same body the Manager is sent, so every contender stores the same bytes. */
const payload = () => sampleSubmission(randomUUID());

/** pg-boss with the Manager's connection pool size, so only the software differs. */
export async function startPgBossContender(context: BenchContext): Promise<Contender> {
  const schema = `pgboss_bench_${context.runId}`;
  dropSchemaAtEnd(context.admin, schema, context.cleanup);
  const boss = new PgBoss({
    connectionString: context.databaseUrl,
    schema,
    max: context.settings.submit.managerPoolMax,
    application_name: "tjm-bench-pgboss",
    // Only send() is measured: no maintenance, cron or monitoring competing for the cores.
    supervise: false,
    schedule: false,
  });
  boss.on("error", (err) => context.log(`pg-boss: ${err.message}`));
  await boss.start();
  const stop = () => boss.stop({ graceful: false });
  context.cleanup.defer("stop pg-boss", stop);
  await boss.createQueue(QUEUE);
  const data = payload();
  return {
    measure: (options) => closedLoop(() => boss.send(QUEUE, data), options),
    stop,
  };
}

/** BEGIN; INSERT one row; COMMIT, with one pooled connection per caller: what the disk allows. */
export async function startRawInsertContender(context: BenchContext): Promise<Contender> {
  const schema = `bench_${context.runId}_raw`;
  dropSchemaAtEnd(context.admin, schema, context.cleanup);
  await context.admin`create schema ${context.admin(schema)}`;
  await context.admin`
    create table ${context.admin(schema)}.samples (
      id uuid primary key,
      payload jsonb not null,
      created_at timestamptz not null default now()
    )`;
  const data = payload();
  return {
    async measure(options) {
      const sql = postgres(context.databaseUrl, {
        max: options.concurrency,
        onnotice: () => {},
        connection: { search_path: schema, application_name: "tjm-bench-raw" },
      });
      try {
        return await closedLoop(
          () =>
            sql.begin(
              (tx) => tx`insert into samples (id, payload) values (${randomUUID()}, ${tx.json(data)})`,
            ),
          options,
        );
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
    stop: async () => {},
  };
}
