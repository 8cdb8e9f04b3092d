/**
 * Deadlines the Manager enforces by itself, every second: leases not accepted in time
 * (DISPATCH_TIMEOUT), kept uploads whose retention ran out (UPLOAD_RETENTION_EXPIRED) and
 * jobs past their deadline (DEADLINE_EXCEEDED). Rows are locked with SKIP LOCKED, so two
 * Managers sweeping at once never fail the same attempt twice or queue two next attempts.
 *
 * It also sends a cancel again, with backoff, while the Worker holding a CANCEL_REQUESTED
 * job has not confirmed it: the first one may have been lost with its stream (deleted, or
 * a NATS that lost its store), and only the Worker's report ends the wait.
 */
import type { Sql, TransactionSql } from "../platform/db.ts";
import type { Logger } from "../platform/logger.ts";
import { FAILURE_CODES, isHeldAttemptState } from "./lifecycle.ts";
import {
  failAttempt,
  type LockedAttempt,
  lockDispatchTimeouts,
  lockExpiredPauses,
  lockPastDeadline,
  lockUnconfirmedCancels,
  sendCancel,
} from "./store.ts";

const BATCH = 100;

/** Waits between cancels a Worker has not confirmed: 5 s, then doubling, at most a minute. */
export const CANCEL_RESEND_BACKOFF = { initialMs: 5000, maxMs: 60_000 };

export interface SweeperOptions {
  sql: Sql;
  logger: Logger;
  maxAttempts: number;
  /** Told after a sweep changed something or sent cancels again. */
  swept: () => void;
  tickMs?: number;
}

export class Sweeper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;
  readonly counters = { dispatchTimeouts: 0, expiredPauses: 0, pastDeadline: 0, cancelsResent: 0 };

  constructor(private readonly options: SweeperOptions) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.sweep()
        .then(() => this.resendCancels())
        .then(() => undefined)
        .catch((err) => this.options.logger.warn("sweep failed; retrying at the next tick", { err }))
        .finally(() => {
          this.running = undefined;
        });
    }, this.options.tickMs ?? 1000);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass over every deadline; returns how many attempts it failed. */
  async sweep(): Promise<number> {
    const failed =
      (await this.failEach(lockDispatchTimeouts, "dispatchTimeouts", () => ({
        code: FAILURE_CODES.dispatchTimeout,
        message: "The Worker did not accept the lease before its dispatch deadline",
      }))) +
      (await this.failEach(lockExpiredPauses, "expiredPauses", () => ({
        code: FAILURE_CODES.uploadRetentionExpired,
        message:
          "Storage stayed unavailable past the retention of the encoded outputs (24 h from the first pause, bounded by the job deadline); the Worker deletes them",
      }))) +
      (await this.failEach(lockPastDeadline, "pastDeadline", () => ({
        code: FAILURE_CODES.deadlineExceeded,
        message: "The job did not finish before its deadline (JOB_DEADLINE_HOURS after submission)",
      })));
    if (failed > 0) this.options.swept();
    return failed;
  }

  /** Sends each cancel whose wait for the Worker's confirmation is over again; returns how many. */
  async resendCancels(): Promise<number> {
    const resent = await this.options.sql.begin(async (tx) => {
      const attempts = await lockUnconfirmedCancels(tx, BATCH, CANCEL_RESEND_BACKOFF);
      for (const attempt of attempts) {
        await sendCancel(tx, attempt);
        this.options.logger.warn("cancel not confirmed by the Worker; sending it again", {
          jobId: attempt.jobId,
          attemptId: attempt.attemptId,
          workerId: attempt.workerId,
        });
      }
      this.counters.cancelsResent += attempts.length;
      return attempts.length;
    });
    if (resent > 0) this.options.swept();
    return resent;
  }

  private async failEach(
    lock: (tx: TransactionSql, limit: number) => Promise<LockedAttempt[]>,
    counter: keyof Sweeper["counters"],
    failure: () => { code: string; message: string },
  ): Promise<number> {
    return this.options.sql.begin(async (tx) => {
      const attempts = await lock(tx, BATCH);
      for (const attempt of attempts) {
        const { code, message } = failure();
        // The Worker may still hold it (late, paused, slow): tell it to let go and clean up.
        if (isHeldAttemptState(attempt.state)) await sendCancel(tx, attempt);
        await failAttempt(tx, attempt, { code, message }, this.options.maxAttempts);
        this.options.logger.warn("attempt failed by the Manager", {
          jobId: attempt.jobId,
          attemptId: attempt.attemptId,
          failureCode: code,
        });
      }
      this.counters[counter] += attempts.length;
      return attempts.length;
    });
  }
}
