/**
 * Turns queued jobs into leases: runs on submit, when capacity frees up (a heartbeat, an
 * attempt ending) and on a 1 s tick. One replica schedules at a time (a transaction-scoped
 * advisory lock), so two Managers never hand out the same Worker slot twice; the other
 * replica's next run picks up whatever is left.
 */

import type { Logger } from "@tjm/platform";
import { PROTOCOL_VERSION, type WorkerPool } from "@tjm/protocol";
import type { OutboxRow } from "../outbox/index.ts";
import type { Sql } from "../platform/db.ts";
import { WakeableLoop } from "../platform/loop.ts";
import {
  candidateWorkers,
  dispatch,
  type LeaseSettings,
  lockQueuedJobs,
  workersWithUnpublishedCommands,
} from "./dispatch-store.ts";
import { chooseAssignments } from "./scheduler.ts";

const BUSY_RETRY_MS = 50;

export interface DispatcherOptions {
  sql: Sql;
  schema: string;
  logger: Logger;
  lease: Omit<LeaseSettings, "protocolVersion">;
  /**
   * Told after leases were committed to the outbox: the rows to publish at once, and how many
   * leases wait for the relay behind a Worker's earlier commands.
   */
  dispatched: (publishNow: readonly OutboxRow[], leftToRelay: number) => void;
  tickMs?: number;
  batchSize?: number;
}

export class Dispatcher extends WakeableLoop {
  readonly counters = { leases: 0 };

  constructor(private readonly options: DispatcherOptions) {
    super(options, "scheduling");
  }

  protected async pass(): Promise<boolean> {
    const {
      full,
      busy,
      leases,
      publishNow = [],
      leftToRelay = 0,
    } = await this.scheduleOnce(this.options.batchSize ?? 100);
    // After the commit: a lease published or logged is a lease stored.
    if (publishNow.length > 0 || leftToRelay > 0) this.options.dispatched(publishNow, leftToRelay);
    for (const lease of leases ?? []) this.options.logger.info("lease dispatched", lease);
    if (busy) {
      // Another replica is scheduling and may have read the queue before this wake-up's
      // job arrived: try again shortly rather than at the next tick.
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      return true;
    }
    return full;
  }

  /** One scheduling transaction; `full` when the batch was full and more may be waiting. */
  async scheduleOnce(batchSize: number): Promise<{
    dispatched: number;
    full: boolean;
    busy?: boolean;
    leases?: { jobId: string; attemptId: string; workerId: string }[];
    /** The outbox rows of the leases its caller publishes at once, and how many wait for the relay. */
    publishNow?: OutboxRow[];
    leftToRelay?: number;
  }> {
    const { sql, schema } = this.options;
    return sql.begin(async (tx) => {
      const [turn] = await tx<{ locked: boolean }[]>`
        select pg_try_advisory_xact_lock(hashtext(${`tjm.scheduler:${schema}`})) as locked`;
      if (!turn?.locked) return { dispatched: 0, full: false, busy: true };
      // Sent together, one round trip.
      const [workers, behindCommands] = await Promise.all([
        candidateWorkers(tx),
        workersWithUnpublishedCommands(tx),
      ]);
      // Only pools with a free slot: jobs of a pool without Workers must not crowd out the rest.
      const pools = [...new Set(workers.filter((w) => w.load < w.capacity).map((w) => w.pool))];
      if (pools.length === 0) return { dispatched: 0, full: false };
      const jobs = await lockQueuedJobs(tx, batchSize, pools);
      if (jobs.length === 0) return { dispatched: 0, full: false };
      const instances = new Map(workers.map((worker) => [worker.workerId, worker.instanceId]));
      const attempts = new Map(jobs.map((job) => [job.jobId, job.currentAttemptId]));
      const assignments = chooseAssignments(
        jobs.map((job) => ({
          jobId: job.jobId,
          pool: job.workerPool as WorkerPool,
          requiredCapabilities: job.requiredCapabilities,
          outputs: job.outputs,
          protocolVersion: job.protocolVersion,
        })),
        workers.map((worker) => ({ ...worker, pool: worker.pool as WorkerPool })),
      );
      const leases = assignments.map((assignment) => ({
        jobId: assignment.jobId,
        attemptId: attempts.get(assignment.jobId) as string,
        workerId: assignment.workerId,
      }));
      const publishNow: OutboxRow[] = [];
      let leftToRelay = 0;
      for (const lease of leases) {
        const command = await dispatch(
          tx,
          { ...lease, instanceId: instances.get(lease.workerId) as string },
          { ...this.options.lease, protocolVersion: PROTOCOL_VERSION },
        );
        if (behindCommands.has(lease.workerId)) leftToRelay++;
        else publishNow.push(command);
      }
      this.counters.leases += assignments.length;
      return {
        dispatched: assignments.length,
        full: jobs.length === batchSize && assignments.length > 0,
        leases,
        publishNow,
        leftToRelay,
      };
    });
  }
}
