import { attemptProgress } from "../lifecycle/index.ts";
import type { Attempt, Job, JobDetail } from "./schema.ts";
import type { AttemptRow, JobDetailRow, JobRow } from "./store.ts";

/** Live progress per attempt id, held in Manager memory only (fed by Workers in a later stage). */
export type LiveProgress = (attemptId: string) => number | undefined;

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function toJob(row: JobRow, live: LiveProgress): Job {
  return {
    id: row.id,
    organizationId: row.organizationId,
    projectId: row.projectId,
    state: row.state,
    priority: row.priority,
    workerPool: row.workerPool,
    requirements: { requiredCapabilities: row.requiredCapabilities },
    currentAttemptId: row.currentAttemptId,
    currentAttempt: {
      state: row.currentAttemptState,
      progress: attemptProgress(row.currentAttemptState, live(row.currentAttemptId)),
    },
    queuedAt: row.queuedAt.toISOString(),
    startedAt: iso(row.startedAt),
    completedAt: iso(row.completedAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toAttempt(row: AttemptRow, live: LiveProgress): Attempt {
  return {
    id: row.id,
    attemptNumber: row.attemptNumber,
    state: row.state,
    progress: attemptProgress(row.state, live(row.id)),
    failureCode: row.failureCode,
    failureMessage: row.failureMessage,
    logsUri: row.logsUri,
    encodingRecoveryCount: row.encodingRecoveryCount,
    uploadRecoveryCount: row.uploadRecoveryCount,
    uploadPausedAt: iso(row.uploadPausedAt),
    uploadPauseExpiresAt: iso(row.uploadPauseExpiresAt),
    uploadResumeRequestedAt: iso(row.uploadResumeRequestedAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toJobDetail(job: JobDetailRow, attempts: AttemptRow[], live: LiveProgress): JobDetail {
  return {
    ...toJob(job, live),
    executionPlan: job.executionPlan,
    attempts: attempts.map((attempt) => toAttempt(attempt, live)),
  };
}
