/** The fencing check every Worker report passes before it may change anything. No I/O. */
import type { Report } from "@tjm/protocol";
import { type AttemptState, isHeldAttemptState } from "./states.ts";

/** Why a report is not applied; each is acked, logged and counted, and changes nothing. */
export type StaleReason =
  | "unknown-attempt"
  | "not-current-attempt"
  | "fencing-token"
  | "other-worker"
  | "old-instance"
  | "attempt-ended";

export interface HeldAttempt {
  state: AttemptState;
  fencingToken: string;
  workerId: string | null;
  instanceId: string | null;
  isCurrent: boolean;
}

/**
 * The fencing check, and the commit point of every report: only the current attempt, at its
 * current fencing token, held by this Worker instance, may change anything. A NATS ack is no
 * such point (JetStream accepts acks after AckWait), so nothing else is trusted.
 */
export function checkFence(
  report: Pick<Report, "workerId" | "instanceId" | "fencingToken">,
  attempt: HeldAttempt | undefined,
): StaleReason | undefined {
  if (!attempt) return "unknown-attempt";
  if (!attempt.isCurrent) return "not-current-attempt";
  if (attempt.fencingToken !== report.fencingToken) return "fencing-token";
  if (attempt.workerId !== report.workerId) return "other-worker";
  if (attempt.instanceId !== report.instanceId) return "old-instance";
  if (!isHeldAttemptState(attempt.state)) return "attempt-ended";
  return undefined;
}
