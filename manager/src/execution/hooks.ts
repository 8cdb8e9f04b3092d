/**
 * What execution does when a Worker's life changes (called by the workers feature inside its
 * own transaction) and when a job held by a Worker is cancelled.
 */
import type { TransactionSql } from "../platform/db.ts";
import type { WorkerLifecycleHooks } from "../workers/index.ts";
import {
  applyTrigger,
  lockAttempt,
  lockAttemptsOfWorker,
  markDrainedIfIdle,
  moveAttemptsToInstance,
  sendCancel,
} from "./store.ts";

export function workerLifecycleHooks(maxAttempts: number): WorkerLifecycleHooks {
  return {
    /** OFFLINE: every attempt that needed the Worker alive is lost. */
    async offline(tx, workerId) {
      for (const attempt of await lockAttemptsOfWorker(tx, workerId, "worker-offline")) {
        await applyTrigger(tx, attempt, "worker-offline", { maxAttempts });
      }
    },
    /**
     * A new instance keeps the attempts it can still finish from disk; the rest of what the old
     * instance held is lost with it. Returns the kept ones, which the instance goes on with.
     */
    async instanceStarted(tx, worker, resumableAttempts) {
      const kept = await moveAttemptsToInstance(tx, worker.workerId, worker.instanceId, resumableAttempts);
      for (const attempt of await lockAttemptsOfWorker(tx, worker.workerId, "worker-restarted", kept)) {
        await applyTrigger(tx, attempt, "worker-restarted", { maxAttempts });
      }
      return kept;
    },
    async disabled(tx, workerId) {
      for (const attempt of await lockAttemptsOfWorker(tx, workerId, "worker-disabled")) {
        await applyTrigger(tx, attempt, "worker-disabled", { maxAttempts });
      }
    },
    drainRequested: (tx, workerId) => markDrainedIfIdle(tx, workerId),
  };
}

/**
 * Tells the Worker holding the attempt (if any) to stop it: kill ffmpeg, abort uploads,
 * clean its workspace. The command of a cancel-requested transition (jobs feature).
 */
export async function cancelHeldAttempt(tx: TransactionSql, attemptId: string): Promise<void> {
  const attempt = await lockAttempt(tx, attemptId);
  if (attempt) await sendCancel(tx, attempt);
}
