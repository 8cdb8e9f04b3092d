/**
 * The lifecycle room: job and attempt states, every transition between them as one table,
 * the fencing check, failure codes and upload retention. Pure: jobs/ and execution/ apply
 * what it decides, in their stores.
 */
export { checkFence, type StaleReason } from "./fence.ts";
export { type Resolution, resolve, sourceAttemptStates, transitionNamed } from "./resolve.ts";
export {
  ATTEMPT_STATES,
  type AttemptState,
  attemptProgress,
  HELD_ATTEMPT_STATES,
  isTerminalAttemptState,
  isTerminalJobState,
  JOB_STATES,
  type JobState,
  NEW_ATTEMPT_STATE,
} from "./states.ts";
export {
  type Loop,
  type OperatorTrigger,
  reportTrigger,
  type Transition,
  type Trigger,
} from "./transitions.ts";
export { type KeptOutputs, UPLOAD_RETENTION_MS } from "./uploads.ts";
