/**
 * The queries behind the scrape-time gauges, read-only and cheap at a million jobs: job counts
 * come from the list route's folded counts (jobs/store.ts), the queue from the scheduler's
 * partial index, the outbox from its unpublished index.
 */
import type { Sql } from "../platform/db.ts";

export interface StoredCounts {
  jobsByState: Map<string, number>;
  /** By `${pool}/${band}`. */
  queueDepth: Map<string, number>;
  workersByConnectivity: Map<string, number>;
  outboxBacklog: number;
  outboxOldestAgeSeconds: number;
}

interface Row {
  series: "jobs" | "queue" | "workers" | "outbox" | "outbox-age";
  key: string | null;
  value: number;
}

/** Every stored count the scrape reports, in one round trip. */
export async function readStoredCounts(sql: Sql): Promise<StoredCounts> {
  const rows = await sql<Row[]>`
    select 'jobs' as series, state as key, sum(n)::float8 as value from (
      select state, count as n from job_state_counts
      union all
      select state, delta as n from job_state_count_deltas
    ) counts group by state
    union all
    select 'queue', worker_pool || '/' || case when priority > 0 then 'high' when priority < 0 then 'low' else 'normal' end,
           count(*)::float8
    from jobs where state = 'QUEUED' group by 2
    union all
    select 'workers', connectivity, count(*)::float8 from workers group by connectivity
    union all
    select 'outbox', null, count(*)::float8 from outbox where published_at is null
    union all
    select 'outbox-age', null, coalesce((
      select extract(epoch from now() - created_at) from outbox where published_at is null order by id limit 1
    ), 0)::float8`;
  const counts: StoredCounts = {
    jobsByState: new Map(),
    queueDepth: new Map(),
    workersByConnectivity: new Map(),
    outboxBacklog: 0,
    outboxOldestAgeSeconds: 0,
  };
  for (const row of rows) {
    if (row.series === "jobs") counts.jobsByState.set(row.key as string, row.value);
    else if (row.series === "queue") counts.queueDepth.set(row.key as string, row.value);
    else if (row.series === "workers") counts.workersByConnectivity.set(row.key as string, row.value);
    else if (row.series === "outbox") counts.outboxBacklog = row.value;
    else counts.outboxOldestAgeSeconds = Math.max(0, row.value);
  }
  return counts;
}

/**
 * How long ago, by PostgreSQL's clock (the one that stamped them), each attempt became
 * dispatchable: its creation, at submit or when the attempt before it failed. Read right after
 * its lease was published.
 */
export async function dispatchLatencies(
  sql: Sql,
  attemptIds: readonly string[],
): Promise<{ workerPool: string; seconds: number }[]> {
  return sql<{ workerPool: string; seconds: number }[]>`
    select j.worker_pool, extract(epoch from clock_timestamp() - a.created_at)::float8 as seconds
    from attempts a join jobs j on j.id = a.job_id
    where a.id = any(${attemptIds as string[]}::uuid[])`;
}
