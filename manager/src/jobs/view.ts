import { attemptProgress } from "../lifecycle/index.ts";
import type { Attempt, Job, JobDetail, JobOutput } from "./schema.ts";
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
    workerId: row.workerId,
    startedAt: iso(row.acceptedAt),
    endedAt: iso(row.endedAt),
    failureCode: row.failureCode,
    failureMessage: row.failureMessage,
    logsUri: row.logsUri,
    encodingRecoveryCount: row.encodingRecoveryCount,
    uploadRecoveryCount: row.uploadRecoveryCount,
    uploadPausedAt: iso(row.uploadPausedAt),
    uploadPauseExpiresAt: iso(row.uploadPauseExpiresAt),
    uploadResumeRequestedAt: iso(row.uploadResumeRequestedAt),
    waitingForInput:
      row.state === "RUNNING" && row.inputWaitSince
        ? { since: row.inputWaitSince.toISOString(), lastError: row.inputWaitError ?? "" }
        : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * A completed job's outputs: its current attempt's reported outputs, each at the destination
 * the plan gave it (the report names where the attempt uploaded it: a staging key, or the
 * destination itself under a multipart commit).
 */
function outputsOf(job: JobDetailRow, current: AttemptRow | undefined): JobOutput[] {
  if (job.state !== "COMPLETED" || !current?.result) return [];
  const destinations = new Map(job.executionPlan.outputs.map((output) => [output.id, output.destinationUri]));
  return current.result.outputs.map((output) => ({
    id: output.id,
    uri: destinations.get(output.id) ?? output.uri,
    bytes: output.bytes,
    sha256: output.sha256,
    durationMs: output.durationMs,
    codecs: output.codecs,
    widthPx: output.widthPx ?? null,
    heightPx: output.heightPx ?? null,
  }));
}

export function toJobDetail(job: JobDetailRow, attempts: AttemptRow[], live: LiveProgress): JobDetail {
  const current = attempts.find((attempt) => attempt.id === job.currentAttemptId);
  return {
    ...toJob(job, live),
    executionPlan: job.executionPlan,
    attempts: attempts.map((attempt) => toAttempt(attempt, live)),
    outputs: outputsOf(job, current),
    manifest: job.state === "COMPLETED" ? (current?.result?.manifest ?? null) : null,
  };
}
