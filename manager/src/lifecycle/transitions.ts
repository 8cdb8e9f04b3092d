/**
 * Every transition of a job and its current attempt, as data: what triggers it, the states it
 * applies from, the guards it needs, the states it leads to and what else it does. The stores
 * apply what `resolve` (resolve.ts) picks; nothing else decides a target state. No I/O.
 */
import type { Report } from "@tjm/protocol";
import { FAILURE_CODES, isRetryableFailure, type ManagerFailureCode } from "./failures.ts";
import {
  ACTIVE_JOB_STATES,
  ATTEMPT_STATES,
  type AttemptState,
  HELD_ATTEMPT_STATES,
  type JobState,
  NEW_ATTEMPT_STATE,
} from "./states.ts";
import type { KeptOutputs } from "./uploads.ts";

/** One trigger per report type of the protocol. */
export type ReportTrigger = `report:${Report["type"]}`;

export const TRIGGERS = [
  // An operator, through the API.
  "submit",
  "cancel-requested",
  "resume-uploads",
  "retry",
  // The dispatcher.
  "lease-dispatched",
  // The Worker holding the attempt (after the fencing check).
  "report:accepted",
  "report:rejected",
  "report:started",
  "report:encoded",
  "report:upload-paused",
  "report:upload-resumed",
  "report:input-waiting",
  "report:input-resumed",
  "report:completed",
  "report:failed",
  "report:cancelled",
  // The promoter.
  "promotion-done",
  "promotion-failed",
  // The sweeper.
  "dispatch-timeout",
  "retention-expired",
  "deadline-exceeded",
  "cancel-unconfirmed",
  // The Worker's own life (workers feature).
  "worker-offline",
  "worker-restarted",
  "worker-disabled",
] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** What an operator asks of an existing job through the API. */
export type OperatorTrigger = Extract<Trigger, "cancel-requested" | "retry" | "resume-uploads">;

export const reportTrigger = (report: Pick<Report, "type">): Trigger =>
  `report:${report.type}` satisfies ReportTrigger;

/** The Manager's loops a committed transition may have given work. */
export const LOOPS = ["dispatcher", "promoter"] as const;
export type Loop = (typeof LOOPS)[number];

export const GUARDS = [
  "completion-accepted",
  "completion-not-accepted",
  "next-attempt-allowed",
  "no-next-attempt",
  "uploads-resumable",
] as const;
export type Guard = (typeof GUARDS)[number];

/** What guards look at besides the states. */
export interface Facts {
  now: Date;
  jobDeadline: Date;
  /** The attempt's completed report was accepted: its outputs wait for promotion. */
  completionAccepted: boolean;
  /** Where the attempt may fail: its number and MAX_ATTEMPTS. */
  attemptNumber?: number;
  maxAttempts?: number;
  /** The code a Worker reported with `failed`. */
  reportedFailureCode?: string;
  /** For resume-uploads: until when the outputs are kept, and by which Worker. */
  keptOutputs?: KeptOutputs;
}

export interface Effects {
  /** The outbox announcement: job.updated carries the job's `from` and `to` states. */
  event?: "job.created" | "job.updated";
  /** Sent to the Worker holding the attempt, if one does. */
  command?: "lease" | "cancel" | "resume-uploads";
  /** The attempt fails with this code ("reported": the Worker's); a null message comes with the trigger. */
  failure?: { code: ManagerFailureCode | "reported"; message: string | null };
  /** A new attempt (NEW_ATTEMPT_STATE, the next fencing token) becomes the job's current one. */
  nextAttempt?: true;
  /** The reported outputs are recorded for promotion: completion accepted, promotion pending. */
  acceptCompletion?: true;
  /** The staged outputs a `completed` report names are deleted: nobody will promote them. */
  discardReportedOutputs?: true;
  /**
   * The attempt's reads of its input wait for storage ("waiting": since when and the last
   * error, from the report) or read again ("reading"); its state does not change.
   */
  inputWait?: "waiting" | "reading";
  wake: readonly Loop[];
}

export interface Transition {
  name: string;
  trigger: Trigger;
  /** The (job, current attempt) states it applies from; null for the job a submission creates. */
  from: { job: readonly JobState[]; attempt: readonly AttemptState[] } | null;
  /** Each must hold (GUARDS), besides the states. */
  guards: readonly Guard[];
  /** Target states; an absent one stays as it is. */
  to: { job?: JobState; attempt?: AttemptState };
  effects: Effects;
}

export interface States {
  job: JobState;
  attempt: AttemptState;
}

const ANY_ATTEMPT = ATTEMPT_STATES;
const NOT_CANCELLING = ["QUEUED", "RUNNING", "WAITING_FOR_STORAGE"] as const satisfies readonly JobState[];

/**
 * An attempt failing, and what follows for its job: the next attempt while the failure is
 * retryable, attempts remain and the deadline has not passed; otherwise the job fails; a job
 * whose cancel was pending is cancelled.
 */
function attemptFails(spec: {
  name: string;
  trigger: Trigger;
  jobs?: readonly JobState[];
  attempts: readonly AttemptState[];
  guards?: readonly Guard[];
  failure: NonNullable<Effects["failure"]>;
  command?: "cancel";
}): Transition[] {
  const jobs = spec.jobs ?? ACTIVE_JOB_STATES;
  const guards = spec.guards ?? [];
  const mayRetry = spec.failure.code === "reported" || isRetryableFailure(spec.failure.code);
  const effects = {
    event: "job.updated",
    failure: spec.failure,
    ...(spec.command ? { command: spec.command } : {}),
    wake: ["dispatcher"],
  } as const;
  const notCancelling = jobs.filter((job) => job !== "CANCEL_REQUESTED");
  const rows: Transition[] = [];
  if (mayRetry) {
    rows.push({
      name: `${spec.name}.next-attempt`,
      trigger: spec.trigger,
      from: { job: notCancelling, attempt: spec.attempts },
      guards: [...guards, "next-attempt-allowed"],
      to: { job: "QUEUED", attempt: "FAILED" },
      effects: { ...effects, nextAttempt: true },
    });
  }
  rows.push({
    name: `${spec.name}.job-failed`,
    trigger: spec.trigger,
    from: { job: notCancelling, attempt: spec.attempts },
    guards: mayRetry ? [...guards, "no-next-attempt"] : guards,
    to: { job: "FAILED", attempt: "FAILED" },
    effects,
  });
  if (jobs.includes("CANCEL_REQUESTED")) {
    rows.push({
      name: `${spec.name}.job-cancelled`,
      trigger: spec.trigger,
      from: { job: ["CANCEL_REQUESTED"], attempt: spec.attempts },
      guards,
      to: { job: "CANCELLED", attempt: "FAILED" },
      effects,
    });
  }
  return rows;
}

export const TRANSITIONS: readonly Transition[] = [
  // ---- operator ----
  {
    name: "job-submitted",
    trigger: "submit",
    from: null,
    guards: [],
    to: { job: "QUEUED", attempt: NEW_ATTEMPT_STATE },
    effects: { event: "job.created", wake: ["dispatcher"] },
  },
  {
    name: "cancel-now",
    trigger: "cancel-requested",
    from: { job: ["QUEUED"], attempt: ANY_ATTEMPT },
    guards: [],
    to: { job: "CANCELLED", attempt: "CANCELLED" },
    // A lease may be on its way to a Worker that has not accepted it yet: it drops it.
    effects: { event: "job.updated", command: "cancel", wake: ["dispatcher"] },
  },
  {
    name: "cancel-held-by-worker",
    trigger: "cancel-requested",
    from: { job: ["RUNNING", "WAITING_FOR_STORAGE"], attempt: ANY_ATTEMPT },
    guards: [],
    to: { job: "CANCEL_REQUESTED" },
    effects: { event: "job.updated", command: "cancel", wake: [] },
  },
  {
    name: "already-cancelling",
    trigger: "cancel-requested",
    from: { job: ["CANCEL_REQUESTED", "CANCELLED"], attempt: ANY_ATTEMPT },
    guards: [],
    to: {},
    effects: { wake: [] },
  },
  {
    name: "resume-uploads-requested",
    trigger: "resume-uploads",
    from: { job: ["WAITING_FOR_STORAGE"], attempt: ["WAITING_FOR_STORAGE"] },
    guards: ["uploads-resumable"],
    // The job stays WAITING_FOR_STORAGE until the Worker reports `upload-resumed`.
    to: {},
    effects: { command: "resume-uploads", wake: [] },
  },
  {
    name: "retried",
    trigger: "retry",
    from: { job: ["FAILED"], attempt: ANY_ATTEMPT },
    guards: [],
    to: { job: "QUEUED" },
    effects: { event: "job.updated", nextAttempt: true, wake: ["dispatcher"] },
  },
  // ---- dispatcher ----
  {
    name: "lease-dispatched",
    trigger: "lease-dispatched",
    from: { job: ["QUEUED"], attempt: ["CREATED"] },
    guards: [],
    to: { attempt: "DISPATCHED" },
    effects: { command: "lease", wake: [] },
  },
  // ---- Worker reports ----
  {
    name: "lease-accepted",
    trigger: "report:accepted",
    from: { job: ["QUEUED"], attempt: ["DISPATCHED"] },
    guards: [],
    to: { job: "RUNNING", attempt: "RUNNING" },
    effects: { event: "job.updated", wake: [] },
  },
  {
    // ffmpeg was spawned before the `accepted` report arrived (or that report was lost).
    name: "started-before-accepted",
    trigger: "report:started",
    from: { job: ["QUEUED"], attempt: ["DISPATCHED"] },
    guards: [],
    to: { job: "RUNNING", attempt: "RUNNING" },
    effects: { event: "job.updated", wake: [] },
  },
  ...attemptFails({
    name: "lease-rejected",
    trigger: "report:rejected",
    attempts: ["DISPATCHED"],
    failure: { code: FAILURE_CODES.leaseRejected, message: null },
  }),
  {
    name: "encoded-before-accepted",
    trigger: "report:encoded",
    from: { job: ["QUEUED"], attempt: ["DISPATCHED"] },
    guards: [],
    to: { job: "RUNNING", attempt: "UPLOADING" },
    effects: { event: "job.updated", wake: [] },
  },
  {
    name: "encoded",
    trigger: "report:encoded",
    from: { job: ["RUNNING", "CANCEL_REQUESTED"], attempt: ["DISPATCHED", "RUNNING"] },
    guards: [],
    to: { attempt: "UPLOADING" },
    effects: { wake: [] },
  },
  {
    name: "uploads-paused",
    trigger: "report:upload-paused",
    from: { job: ["RUNNING"], attempt: ["RUNNING", "UPLOADING"] },
    guards: [],
    to: { job: "WAITING_FOR_STORAGE", attempt: "WAITING_FOR_STORAGE" },
    effects: { event: "job.updated", wake: [] },
  },
  {
    // The job waits for the Worker's answer to its cancel, not for storage.
    name: "uploads-paused-while-cancelling",
    trigger: "report:upload-paused",
    from: { job: ["CANCEL_REQUESTED"], attempt: ["RUNNING", "UPLOADING"] },
    guards: [],
    to: { attempt: "WAITING_FOR_STORAGE" },
    effects: { wake: [] },
  },
  {
    name: "uploads-resumed",
    trigger: "report:upload-resumed",
    from: { job: ["WAITING_FOR_STORAGE"], attempt: ["WAITING_FOR_STORAGE"] },
    guards: [],
    to: { job: "RUNNING", attempt: "UPLOADING" },
    effects: { event: "job.updated", wake: [] },
  },
  {
    name: "uploads-resumed-while-cancelling",
    trigger: "report:upload-resumed",
    from: { job: ["CANCEL_REQUESTED"], attempt: ["WAITING_FOR_STORAGE"] },
    guards: [],
    to: { attempt: "UPLOADING" },
    effects: { wake: [] },
  },
  {
    // The encode waits for its input, holding what it encoded: the job stays RUNNING, and the
    // attempt shows the wait (waitingForInput) until the store answers.
    name: "input-waiting",
    trigger: "report:input-waiting",
    from: { job: ["RUNNING", "CANCEL_REQUESTED"], attempt: ["RUNNING"] },
    guards: [],
    to: {},
    effects: { event: "job.updated", inputWait: "waiting", wake: [] },
  },
  {
    // A subtitle or watermark download waited before ffmpeg started, and `accepted` was lost.
    name: "input-waiting-before-accepted",
    trigger: "report:input-waiting",
    from: { job: ["QUEUED"], attempt: ["DISPATCHED"] },
    guards: [],
    to: { job: "RUNNING", attempt: "RUNNING" },
    effects: { event: "job.updated", inputWait: "waiting", wake: [] },
  },
  {
    name: "input-resumed",
    trigger: "report:input-resumed",
    from: { job: ["RUNNING", "CANCEL_REQUESTED"], attempt: ["RUNNING"] },
    guards: [],
    to: {},
    effects: { event: "job.updated", inputWait: "reading", wake: [] },
  },
  {
    // The commit point of a successful attempt; the promoter copies the outputs, then
    // promotion-done makes the job COMPLETED. Until then the attempt stays UPLOADING.
    name: "completion-accepted",
    trigger: "report:completed",
    from: { job: ["RUNNING"], attempt: HELD_ATTEMPT_STATES },
    guards: [],
    to: { attempt: "UPLOADING" },
    effects: { acceptCompletion: true, wake: ["promoter"] },
  },
  {
    // Completed before the Manager saw `accepted`, or while it thought storage was away.
    name: "completion-accepted-job-running",
    trigger: "report:completed",
    from: { job: ["QUEUED", "WAITING_FOR_STORAGE"], attempt: HELD_ATTEMPT_STATES },
    guards: [],
    to: { job: "RUNNING", attempt: "UPLOADING" },
    effects: { event: "job.updated", acceptCompletion: true, wake: ["promoter"] },
  },
  {
    name: "completed-after-cancel",
    trigger: "report:completed",
    from: { job: ["CANCEL_REQUESTED"], attempt: HELD_ATTEMPT_STATES },
    guards: [],
    to: { job: "CANCELLED", attempt: "CANCELLED" },
    effects: { event: "job.updated", discardReportedOutputs: true, wake: ["dispatcher"] },
  },
  ...attemptFails({
    name: "attempt-failed",
    trigger: "report:failed",
    attempts: HELD_ATTEMPT_STATES,
    failure: { code: "reported", message: null },
  }),
  {
    name: "cancel-confirmed",
    trigger: "report:cancelled",
    from: { job: ["CANCEL_REQUESTED"], attempt: HELD_ATTEMPT_STATES },
    guards: [],
    to: { job: "CANCELLED", attempt: "CANCELLED" },
    effects: { event: "job.updated", wake: ["dispatcher"] },
  },
  ...attemptFails({
    name: "abandoned",
    trigger: "report:cancelled",
    jobs: NOT_CANCELLING,
    attempts: HELD_ATTEMPT_STATES,
    failure: {
      code: FAILURE_CODES.abandoned,
      message: "The Worker gave the attempt up without being asked to cancel it",
    },
  }),
  // ---- promoter ----
  {
    name: "promotion-done",
    trigger: "promotion-done",
    from: { job: ACTIVE_JOB_STATES, attempt: ["UPLOADING"] },
    guards: ["completion-accepted"],
    to: { job: "COMPLETED", attempt: "SUCCEEDED" },
    effects: { event: "job.updated", wake: ["dispatcher"] },
  },
  ...attemptFails({
    name: "output-mismatch",
    trigger: "promotion-failed",
    attempts: ["UPLOADING"],
    guards: ["completion-accepted"],
    failure: { code: FAILURE_CODES.outputMismatch, message: null },
  }),
  // ---- sweeper ----
  ...attemptFails({
    name: "dispatch-timeout",
    trigger: "dispatch-timeout",
    attempts: ["DISPATCHED"],
    failure: {
      code: FAILURE_CODES.dispatchTimeout,
      message: "The Worker did not accept the lease before its dispatch deadline",
    },
    // The Worker may still hold it (late, paused, slow): it lets go and cleans up.
    command: "cancel",
  }),
  ...attemptFails({
    name: "retention-expired",
    trigger: "retention-expired",
    attempts: ["WAITING_FOR_STORAGE"],
    failure: {
      code: FAILURE_CODES.uploadRetentionExpired,
      message:
        "Storage stayed unavailable past the retention of the encoded outputs (24 h from the first pause, bounded by the job deadline); the Worker deletes them",
    },
    command: "cancel",
  }),
  ...attemptFails({
    name: "deadline-exceeded",
    trigger: "deadline-exceeded",
    attempts: ["CREATED", ...HELD_ATTEMPT_STATES],
    // An accepted completion is the Manager's to finish, deadline or not.
    guards: ["completion-not-accepted"],
    failure: {
      code: FAILURE_CODES.deadlineExceeded,
      message: "The job did not finish before its deadline (JOB_DEADLINE_HOURS after submission)",
    },
    command: "cancel",
  }),
  {
    // The first cancel may have been lost with its stream; only the Worker's report ends the wait.
    name: "cancel-resent",
    trigger: "cancel-unconfirmed",
    from: { job: ["CANCEL_REQUESTED"], attempt: HELD_ATTEMPT_STATES },
    guards: ["completion-not-accepted"],
    to: {},
    effects: { command: "cancel", wake: [] },
  },
  // ---- the Worker's life ----
  ...attemptFails({
    name: "worker-offline",
    trigger: "worker-offline",
    // Outputs waiting for storage survive on the Worker's disk while it is away.
    attempts: ["DISPATCHED", "RUNNING", "UPLOADING"],
    guards: ["completion-not-accepted"],
    failure: { code: FAILURE_CODES.workerLost, message: "The Worker stopped heartbeating (OFFLINE)" },
    // Waits in its durable consumer: a Worker that was only frozen (a zombie) stops the
    // attempt and cleans up as soon as it runs again, instead of encoding for nothing.
    command: "cancel",
  }),
  ...attemptFails({
    name: "worker-restarted",
    trigger: "worker-restarted",
    attempts: HELD_ATTEMPT_STATES,
    guards: ["completion-not-accepted"],
    failure: {
      code: FAILURE_CODES.workerLost,
      message: "The Worker restarted and could not resume the attempt",
    },
    // A lease the old instance never read waits in the Worker's durable consumer: without the
    // cancel behind it, the new instance would run an attempt already failed, in a slot the
    // Manager counts as free.
    command: "cancel",
  }),
  ...attemptFails({
    name: "worker-disabled",
    trigger: "worker-disabled",
    attempts: HELD_ATTEMPT_STATES,
    guards: ["completion-not-accepted"],
    failure: {
      code: FAILURE_CODES.workerDisabled,
      message: "An operator disabled the Worker holding the attempt",
    },
  }),
];
