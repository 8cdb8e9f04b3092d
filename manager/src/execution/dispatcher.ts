/**
 * Turns queued jobs into leases: runs on submit, when capacity frees up (a heartbeat, an
 * attempt ending) and on a 1 s tick. One replica schedules at a time (a transaction-scoped
 * advisory lock), so two Managers never hand out the same Worker slot twice; the other
 * replica's next run picks up whatever is left.
 */

import type { Logger } from "@tjm/platform";
import { PROTOCOL_VERSION, type WorkerPool } from "@tjm/protocol";
import type { OutboxRow } from "../outbox/index.ts";
import { type Sql, sendTogether } from "../platform/db.ts";
import { WakeableLoop } from "../platform/loop.ts";
import {
  candidateWorkers,
  type LeaseSettings,
  lease,
  lockQueuedJobs,
  type QueuedJobRow,
  takeTurn,
  unpublishedCommandSubjects,
  workerIdsOf,
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

  /**
   * One scheduling transaction: BEGIN, then the turn, the Workers and the queue read in one round
   * trip, every lease's writes in one more, and COMMIT. `full` when the batch was full and more
   * may be waiting.
   */
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
      // In this order: the unpublished commands are read after the Workers (see there).
      const [[turn], workers, behindCommands, jobs] = await sendTogether(
        takeTurn(tx, schema),
        candidateWorkers(tx, schema),
        unpublishedCommandSubjects(tx),
        lockQueuedJobs(tx, schema, batchSize),
      );
      if (!turn?.locked) return { dispatched: 0, full: false, busy: true };
      if (jobs.length === 0) return { dispatched: 0, full: false };
      const queued = new Map(jobs.map((job) => [job.jobId, job]));
      const instances = new Map(workers.map((worker) => [worker.workerId, worker.instanceId]));
      const assignments = chooseAssignments(
        jobs.map((job) => ({
          jobId: job.jobId,
          pool: job.workerPool as WorkerPool,
          requiredCapabilities: job.requiredCapabilities,
          outputs: job.executionPlan.outputs,
          protocolVersion: job.protocolVersion,
        })),
        workers.map((worker) => ({ ...worker, pool: worker.pool as WorkerPool })),
      );
      if (assignments.length === 0) return { dispatched: 0, full: false };
      const leases = assignments.map(({ jobId, workerId }) => ({
        workerId,
        job: queued.get(jobId) as QueuedJobRow,
        written: lease(
          tx,
          queued.get(jobId) as QueuedJobRow,
          { workerId, instanceId: instances.get(workerId) as string },
          { ...this.options.lease, protocolVersion: PROTOCOL_VERSION },
        ),
      }));
      await sendTogether(...leases.flatMap(({ written }) => written.statements));
      const behind = workerIdsOf(behindCommands);
      const publishNow: OutboxRow[] = [];
      let leftToRelay = 0;
      for (const { workerId, written } of leases) {
        if (behind.has(workerId)) leftToRelay++;
        // Answered already: awaiting it again reads its result.
        else publishNow.push(written.command.row(await written.command.statement));
      }
      this.counters.leases += leases.length;
      return {
        dispatched: leases.length,
        full: jobs.length === batchSize,
        leases: leases.map(({ workerId, job }) => ({
          jobId: job.jobId,
          attemptId: job.currentAttemptId,
          workerId,
        })),
        publishNow,
        leftToRelay,
      };
    });
  }
}
