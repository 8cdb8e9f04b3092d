/**
 * Turns queued jobs into leases: runs on submit, when capacity frees up (a heartbeat, an
 * attempt ending) and on a 1 s tick. One replica schedules at a time (a transaction-scoped
 * advisory lock), so two Managers never hand out the same Worker slot twice; the other
 * replica's next run picks up whatever is left.
 */

import type { Logger } from "@tjm/platform";
import { PROTOCOL_VERSION, type WorkerPool } from "@tjm/protocol";
import type { OutboxRow } from "../outbox/index.ts";
import { type Sql, type Statement, sendTogether, type TransactionSql } from "../platform/db.ts";
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

/** What one scheduling pass did. */
export interface PassOutcome {
  dispatched: number;
  /** The batch was full and more may be waiting. */
  full: boolean;
  /** Another transaction held the scheduler's turn. */
  busy?: boolean;
  leases?: { jobId: string; attemptId: string; workerId: string }[];
  /** The outbox rows of the leases its caller publishes at once, and how many wait for the relay. */
  publishNow?: OutboxRow[];
  leftToRelay?: number;
}

export class Dispatcher extends WakeableLoop {
  readonly counters = { leases: 0 };
  /** Whether the last pass that had the turn left a Worker slot free: a submit may then be leased at once. */
  private freeSlotsLeft = true;

  constructor(private readonly options: DispatcherOptions) {
    super(options, "scheduling");
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 100;
  }

  protected async pass(): Promise<boolean> {
    const outcome = await this.scheduleOnce(this.batchSize);
    this.announce(outcome);
    return this.goOn(outcome);
  }

  /** After a pass's commit: a lease published or logged is a lease stored. */
  private announce({ leases, publishNow = [], leftToRelay = 0 }: PassOutcome): void {
    if (publishNow.length > 0 || leftToRelay > 0) this.options.dispatched(publishNow, leftToRelay);
    for (const lease of leases ?? []) this.options.logger.info("lease dispatched", lease);
  }

  /** Whether another pass may find more (the loop runs it at once). */
  private async goOn({ full, busy }: PassOutcome): Promise<boolean> {
    if (busy) {
      // Another replica is scheduling and may have read the queue before this wake-up's
      // job arrived: try again shortly rather than at the next tick.
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      return true;
    }
    return full;
  }

  /**
   * A submit's insert, sent in a pass's transaction ahead of its reads (so the queue read sees
   * the new job): a job for an idle Worker is leased without a wake-up, the insert's own commit
   * and a round trip, and the insert commits with its lease, or alone. Taken while the loop is
   * idle and the last pass left a slot free; otherwise, or when the pass fails (the insert is
   * rolled back with it), the insert goes alone and `scheduled` is false: the caller wakes the
   * loop as after any write.
   */
  async insertAndSchedule<T>(
    insert: (sql: Sql | TransactionSql) => Statement<T>,
  ): Promise<{ inserted: T; scheduled: boolean }> {
    let combined: Promise<{ outcome: PassOutcome; ahead: T | undefined }> | undefined;
    const ranNow =
      this.freeSlotsLeft &&
      this.runNow(async () => {
        // Announced before the submit's answer is built: the lease goes out first.
        combined = this.passTransaction(this.batchSize, insert).then((passed) => {
          // Committed: whatever happens here must not make the caller insert the job again.
          try {
            this.announce(passed.outcome);
          } catch (err) {
            this.options.logger.warn("a committed lease could not be announced; the relay publishes it", {
              err,
            });
          }
          return passed;
        });
        const passed = await combined.catch(() => undefined);
        return passed ? this.goOn(passed.outcome) : false;
      });
    if (ranNow && combined) {
      try {
        const { outcome, ahead } = await combined;
        return { inserted: ahead as T, scheduled: !outcome.busy };
      } catch (err) {
        this.options.logger.warn("scheduling a submitted job failed; its insert goes alone", { err });
      }
    }
    return { inserted: await insert(this.options.sql), scheduled: false };
  }

  /**
   * One scheduling transaction: BEGIN, then the turn, the Workers, their unpublished commands
   * and the queue read in one round trip, every lease's writes in one more, and COMMIT.
   */
  async scheduleOnce(batchSize: number): Promise<PassOutcome> {
    return (await this.passTransaction(batchSize)).outcome;
  }

  /** scheduleOnce, with `ahead` (a submit's insert) sent first in the reads' round trip and committed with the rest. */
  private async passTransaction<T>(
    batchSize: number,
    ahead?: (sql: TransactionSql) => Statement<T>,
  ): Promise<{ outcome: PassOutcome; ahead: T | undefined }> {
    const { sql, schema } = this.options;
    return sql.begin(async (tx) => {
      const insert = ahead?.(tx);
      // First on the connection; awaited with the reads, so its own failure is the one reported.
      insert?.execute();
      // In this order: the unpublished commands are read after the Workers (see there).
      const [inserted, [[turn], workers, behindCommands, jobs]] = await Promise.all([
        insert,
        sendTogether(
          takeTurn(tx, schema),
          candidateWorkers(tx),
          unpublishedCommandSubjects(tx),
          lockQueuedJobs(tx, batchSize),
        ),
      ]);
      const done = (outcome: PassOutcome) => ({ outcome, ahead: inserted });
      if (!turn?.locked) return done({ dispatched: 0, full: false, busy: true });
      const freeSlots = workers.reduce(
        (free, worker) => free + Math.max(0, worker.capacity - worker.load),
        0,
      );
      this.freeSlotsLeft = freeSlots > 0;
      if (jobs.length === 0) return done({ dispatched: 0, full: false });
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
      this.freeSlotsLeft = freeSlots > assignments.length;
      if (assignments.length === 0) return done({ dispatched: 0, full: false });
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
      return done({
        dispatched: leases.length,
        full: jobs.length === batchSize,
        leases: leases.map(({ workerId, job }) => ({
          jobId: job.jobId,
          attemptId: job.currentAttemptId,
          workerId,
        })),
        publishNow,
        leftToRelay,
      });
    });
  }
}
