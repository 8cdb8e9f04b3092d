/**
 * What execution does when a Worker's life changes (called by the workers feature inside its
 * own transaction).
 */
import type { WorkerLifecycleHooks } from "../workers/index.ts";
import { lockAttemptsOfWorker, moveAttemptsToInstance } from "./sweep-store.ts";
import { applyTrigger, markDrainedIfIdle } from "./transitions.ts";

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
