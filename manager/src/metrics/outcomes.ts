/**
 * What the outbox relay's published rows tell the metrics, without I/O. The relay publishes
 * each committed announcement once for the whole installation, so counting there counts every
 * attempt's end once, and never one whose transaction rolled back.
 */
import { type AttemptOutcome, failureCodeLabel } from "./series.ts";

/** An outbox row as the relay published it. */
export interface PublishedRow {
  kind: string;
  payload: Record<string, unknown>;
}

export interface AttemptEnding {
  outcome: AttemptOutcome;
  failureCode: string;
}

/**
 * The end of an attempt a job.updated announcement records, if it records one. An attempt ends
 * exactly when it fails (the announcement carries its failureCode, whatever follows for the
 * job) or its job becomes COMPLETED or CANCELLED; outcomes.test.ts holds the lifecycle table
 * to that.
 */
export function attemptEnding(row: PublishedRow): AttemptEnding | undefined {
  if (row.kind !== "job.updated") return undefined;
  const { failureCode, to } = row.payload;
  if (typeof failureCode === "string")
    return { outcome: "failed", failureCode: failureCodeLabel(failureCode) };
  if (to === "COMPLETED") return { outcome: "succeeded", failureCode: "none" };
  if (to === "CANCELLED") return { outcome: "cancelled", failureCode: "none" };
  return undefined;
}

/** The attempt a lease command hands to its Worker, if the row is one. */
export function leasedAttempt(row: PublishedRow): string | undefined {
  if (row.kind !== "worker.command" || row.payload.type !== "lease") return undefined;
  return typeof row.payload.attemptId === "string" ? row.payload.attemptId : undefined;
}
