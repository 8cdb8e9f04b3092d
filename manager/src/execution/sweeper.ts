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

import type { Logger } from "@tjm/platform";
import type { Loop, Trigger } from "../lifecycle/index.ts";
import type { Sql, TransactionSql } from "../platform/db.ts";
import { TickingTask } from "../platform/loop.ts";
import {
  lockDispatchTimeouts,
  lockExpiredPauses,
  lockPastDeadline,
  lockUnconfirmedCancels,
} from "./sweep-store.ts";
import { applyTrigger, type LockedAttempt } from "./transitions.ts";

const BATCH = 100;

/** Waits between cancels a Worker has not confirmed: 5 s, then doubling, at most a minute. */
export const CANCEL_RESEND_BACKOFF = { initialMs: 5000, maxMs: 60_000 };

export interface SweeperOptions {
  sql: Sql;
  logger: Logger;
  maxAttempts: number;
  /** Told after a sweep changed something or sent cancels again, with the loops to wake. */
  swept: (wake: Loop[]) => void;
  tickMs?: number;
}

export class Sweeper extends TickingTask {
  readonly counters = { dispatchTimeouts: 0, expiredPauses: 0, pastDeadline: 0, cancelsResent: 0 };

  constructor(private readonly options: SweeperOptions) {
    super(options, "sweep failed; retrying at the next tick");
  }

  protected async tick(): Promise<void> {
    await this.sweep();
    await this.resendCancels();
  }

  /** One pass over every deadline; returns how many attempts it failed. */
  async sweep(): Promise<number> {
    const wake: Loop[] = [];
    const failed =
      (await this.applyEach(lockDispatchTimeouts, "dispatch-timeout", "dispatchTimeouts", wake)) +
      (await this.applyEach(lockExpiredPauses, "retention-expired", "expiredPauses", wake)) +
      (await this.applyEach(lockPastDeadline, "deadline-exceeded", "pastDeadline", wake));
    if (failed > 0) this.options.swept(wake);
    return failed;
  }

  /** Sends each cancel whose wait for the Worker's confirmation is over again; returns how many. */
  async resendCancels(): Promise<number> {
    const wake: Loop[] = [];
    const resent = await this.applyEach(
      (tx, limit) => lockUnconfirmedCancels(tx, limit, CANCEL_RESEND_BACKOFF),
      "cancel-unconfirmed",
      "cancelsResent",
      wake,
    );
    if (resent > 0) this.options.swept(wake);
    return resent;
  }

  /** Applies a trigger to every attempt the lock selects; returns how many it changed. */
  private async applyEach(
    lock: (tx: TransactionSql, limit: number) => Promise<LockedAttempt[]>,
    trigger: Trigger,
    counter: keyof Sweeper["counters"],
    wake: Loop[],
  ): Promise<number> {
    return this.options.sql.begin(async (tx) => {
      let applied = 0;
      for (const attempt of await lock(tx, BATCH)) {
        const resolution = await applyTrigger(tx, attempt, trigger, {
          maxAttempts: this.options.maxAttempts,
        });
        if (resolution.kind === "refused") continue;
        const { transition } = resolution;
        applied++;
        wake.push(...transition.effects.wake);
        const { failure } = transition.effects;
        this.options.logger.warn(
          failure ? "attempt failed by the Manager" : "cancel not confirmed by the Worker; sending it again",
          {
            jobId: attempt.jobId,
            attemptId: attempt.attemptId,
            workerId: attempt.workerId,
            transition: transition.name,
            ...(failure ? { failureCode: failure.code } : {}),
          },
        );
      }
      this.counters[counter] += applied;
      return applied;
    });
  }
}
