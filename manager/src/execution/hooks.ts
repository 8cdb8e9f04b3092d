/**
 * What execution does when a Worker's life changes (called by the workers feature inside its
 * own transaction) and when a job held by a Worker is cancelled.
 */
import type { TransactionSql } from "../platform/db.ts";
import type { WorkerLifecycleHooks } from "../workers/index.ts";
import { FAILURE_CODES } from "./lifecycle.ts";
import {
  failAttempt,
  lockAttempt,
  lockAttemptsNeedingWorker,
  markDrainedIfIdle,
  moveAttemptsToInstance,
  sendCancel,
} from "./store.ts";

export function workerLifecycleHooks(maxAttempts: number): WorkerLifecycleHooks {
  return {
    /** OFFLINE: every attempt that needed the Worker alive is lost and goes to the next attempt. */
    async offline(tx, workerId) {
      for (const attempt of await lockAttemptsNeedingWorker(tx, workerId)) {
        // Waits in its durable consumer: a Worker that was only frozen (a zombie) stops the
        // attempt and cleans up as soon as it runs again, instead of encoding for nothing.
        await sendCancel(tx, attempt);
        await failAttempt(
          tx,
          attempt,
          { code: FAILURE_CODES.workerLost, message: "The Worker stopped heartbeating (OFFLINE)" },
          maxAttempts,
        );
      }
    },
    /**
     * A new instance keeps the attempts it can still finish from disk; the rest of what the old
     * instance held is lost with it.
     */
    async instanceStarted(tx, worker, resumableAttempts) {
      const kept = await moveAttemptsToInstance(tx, worker.workerId, worker.instanceId, resumableAttempts);
      const lost = await lockAttemptsNeedingWorker(tx, worker.workerId, { keep: kept, includeWaiting: true });
      for (const attempt of lost) {
        await failAttempt(
          tx,
          attempt,
          {
            code: FAILURE_CODES.workerLost,
            message: "The Worker restarted and could not resume the attempt",
          },
          maxAttempts,
        );
      }
    },
    async disabled(tx, workerId) {
      for (const attempt of await lockAttemptsNeedingWorker(tx, workerId, { includeWaiting: true })) {
        await failAttempt(
          tx,
          attempt,
          {
            code: FAILURE_CODES.workerDisabled,
            message: "An operator disabled the Worker holding the attempt",
          },
          maxAttempts,
        );
      }
    },
    drainRequested: (tx, workerId) => markDrainedIfIdle(tx, workerId),
  };
}

/**
 * Tells the Worker holding the attempt (if any) to stop it: kill ffmpeg, abort uploads,
 * clean its workspace. Used when a job is cancelled.
 */
export async function cancelHeldAttempt(tx: TransactionSql, attemptId: string): Promise<void> {
  const attempt = await lockAttempt(tx, attemptId);
  if (attempt) await sendCancel(tx, attempt);
}
