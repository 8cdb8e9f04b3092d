/**
 * An attempt on this Worker as data, like the Manager's lifecycle: its phases, the events that
 * move it, and for each (phase, event) the next phase and the effects attempt.ts runs, in order.
 * `next` is the one function that decides; attempt.ts only runs what it says. No I/O.
 *
 * The phase is what the attempt record on disk holds (records.ts): a restarted agent continues
 * an attempt whose outputs were encoded (uploading, waiting_for_storage) and discards one that
 * was not (nothing of an encode survives its ffmpeg).
 */

export const ATTEMPT_PHASES = [
  /** The lease is taken (a slot), and the run starts once `accepted` is stored. */
  "accepting",
  /** Reading what the encode needs: the input's relay, subtitle and watermark files, a probe. */
  "preparing",
  /** ffmpeg runs (again on a downloaded input when the stream was given up). */
  "encoding",
  /** Every output is complete on disk and goes up. */
  "uploading",
  /** Storage stayed down past the retry budget: the outputs wait on disk for resume-uploads. */
  "waiting_for_storage",
  /** `completed` is on its way; the files go once it is stored. */
  "completing",
  /** A step failed: the log goes up, the uploads are aborted and the files deleted. */
  "failing",
  /** The Manager cancelled it: the work in progress stops, then its files go. */
  "cancelling",
  /** The agent stops before the outputs were encoded: nothing is worth keeping. */
  "abandoning",
  /** The agent stops with the outputs encoded: they stay on disk for the next instance. */
  "stopping",
  /** Its last report (failed or cancelled) is on its way. */
  "reporting",
  "ended",
] as const;
export type AttemptPhase = (typeof ATTEMPT_PHASES)[number];

export const ATTEMPT_EVENTS = [
  /** The Manager's stream stored `accepted`: the run may start. */
  "accepted-stored",
  /** What the encode needs is here: ffmpeg starts (the first time). */
  "input-ready",
  /** Reads of the input spent their retry budget and wait for the store; or read again. */
  "input-waiting",
  "input-resumed",
  /** ffmpeg exited and every output is complete. */
  "encoded",
  /** Storage stayed down past an upload's retry budget. */
  "storage-lost",
  /** The Manager's resume-uploads. */
  "resume-requested",
  /** Every output and the log went up. */
  "uploaded",
  /** A step failed for a reason of its own (not a cancel or a stop). */
  "step-failed",
  /** The Manager's cancel. */
  "cancel",
  /** The agent stops (SIGTERM). */
  "stop",
  /** The step that was running when a cancel or a stop came has returned. */
  "unwound",
  /** A failed attempt's log is up and its files are gone. */
  "cleaned-up",
  /** The last report is stored. */
  "reported",
  /** After a restart: the Manager no longer counts the attempt as this Worker's. */
  "drop",
] as const;
export type AttemptEvent = (typeof ATTEMPT_EVENTS)[number];

export const ATTEMPT_EFFECTS = [
  /** The attempt's signal aborts (storage requests, waits), ffmpeg is killed, a wait for resume-uploads ends. */
  "stop-work",
  /** The record on disk takes the new phase (and the outputs encoded). */
  "save-record",
  "report-started",
  "report-input-waiting",
  "report-input-resumed",
  "report-encoded",
  "report-upload-paused",
  "report-upload-resumed",
  "report-completed",
  "report-failed",
  "report-cancelled",
  /** The ffmpeg log goes to logsUri, as far as storage allows. */
  "upload-log",
  /** Unfinished multipart uploads of every output are aborted. */
  "abort-uploads",
  /** The attempt's work directory, log and records go. */
  "delete-files",
] as const;
export type AttemptEffect = (typeof ATTEMPT_EFFECTS)[number];

export interface PhaseTransition {
  event: AttemptEvent;
  from: readonly AttemptPhase[];
  /** Unset: the phase stays as it is. */
  to?: AttemptPhase;
  effects: readonly AttemptEffect[];
}

/** The phases with work still to do: a cancel ends them, and so does a drop after a restart. */
const WORKING = ["accepting", "preparing", "encoding", "uploading", "waiting_for_storage"] as const;

export const PHASE_TRANSITIONS: readonly PhaseTransition[] = [
  { event: "accepted-stored", from: ["accepting"], to: "preparing", effects: [] },
  { event: "input-ready", from: ["preparing"], to: "encoding", effects: ["report-started"] },
  { event: "input-waiting", from: ["preparing", "encoding"], effects: ["report-input-waiting"] },
  { event: "input-resumed", from: ["preparing", "encoding"], effects: ["report-input-resumed"] },
  { event: "encoded", from: ["encoding"], to: "uploading", effects: ["save-record", "report-encoded"] },
  {
    event: "storage-lost",
    from: ["uploading"],
    to: "waiting_for_storage",
    effects: ["save-record", "report-upload-paused"],
  },
  {
    event: "resume-requested",
    from: ["waiting_for_storage"],
    to: "uploading",
    effects: ["save-record", "report-upload-resumed"],
  },
  { event: "uploaded", from: ["uploading"], to: "completing", effects: ["report-completed"] },
  { event: "reported", from: ["completing"], to: "ended", effects: ["delete-files"] },
  {
    event: "step-failed",
    from: ["preparing", "encoding", "uploading"],
    to: "failing",
    effects: ["upload-log", "abort-uploads", "delete-files"],
  },
  { event: "cleaned-up", from: ["failing"], to: "reporting", effects: ["report-failed"] },
  { event: "cancel", from: WORKING, to: "cancelling", effects: ["stop-work"] },
  {
    event: "unwound",
    from: ["cancelling"],
    to: "reporting",
    effects: ["abort-uploads", "delete-files", "report-cancelled"],
  },
  { event: "stop", from: ["accepting", "preparing", "encoding"], to: "abandoning", effects: ["stop-work"] },
  { event: "stop", from: ["uploading", "waiting_for_storage"], to: "stopping", effects: ["stop-work"] },
  // Outputs uploading while ffmpeg wrote them are incomplete: the next attempt starts over.
  { event: "unwound", from: ["abandoning"], to: "ended", effects: ["abort-uploads", "delete-files"] },
  { event: "unwound", from: ["stopping"], to: "ended", effects: [] },
  { event: "drop", from: WORKING, to: "ended", effects: ["abort-uploads", "delete-files"] },
  { event: "reported", from: ["reporting"], to: "ended", effects: [] },
];

export type PhaseResolution =
  | { kind: "transition"; to: AttemptPhase; effects: readonly AttemptEffect[] }
  | { kind: "refused"; reason: string };

/** What `event` does to an attempt in `phase`: its next phase and the effects to run, or why nothing. */
export function next(phase: AttemptPhase, event: AttemptEvent): PhaseResolution {
  const row = PHASE_TRANSITIONS.find(
    (transition) => transition.event === event && transition.from.includes(phase),
  );
  if (!row) return { kind: "refused", reason: `${event} changes nothing in ${phase}` };
  return { kind: "transition", to: row.to ?? phase, effects: row.effects };
}

/**
 * Phases that take one of the Worker's slots. An attempt waiting for storage does not (its files
 * wait on disk), nor one whose last report is on its way: the Manager may lease the next job as
 * soon as it applies that report, and leases one right after a cancel it sends for a lost
 * Worker's attempt, before the files are gone.
 */
const SLOT_PHASES: ReadonlySet<AttemptPhase> = new Set([
  "accepting",
  "preparing",
  "encoding",
  "uploading",
  "failing",
  "abandoning",
  "stopping",
]);

export function holdsSlot(phase: AttemptPhase): boolean {
  return SLOT_PHASES.has(phase);
}

/** Phases whose outputs are complete on disk: the next instance can still upload them. */
export function keepsOutputs(phase: AttemptPhase): boolean {
  return phase === "uploading" || phase === "waiting_for_storage";
}

/** A step that fails in this phase failed at reading the input, encoding or uploading. */
export function failedStage(phase: AttemptPhase): "input" | "encode" | "upload" {
  if (phase === "encoding") return "encode";
  if (phase === "uploading") return "upload";
  return "input";
}
