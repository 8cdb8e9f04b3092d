/** Picking the transition a trigger makes, from the table (transitions.ts). No I/O. */
import { afterAttemptFailed } from "./failures.ts";
import { ATTEMPT_STATES, type AttemptState, NEW_ATTEMPT_STATE } from "./states.ts";
import {
  type Facts,
  type Guard,
  type States,
  TRANSITIONS,
  TRIGGERS,
  type Transition,
  type Trigger,
} from "./transitions.ts";
import { resumeUploadsRefusal } from "./uploads.ts";

const BY_TRIGGER = new Map<Trigger, Transition[]>(
  TRIGGERS.map((trigger) => [trigger, TRANSITIONS.filter((row) => row.trigger === trigger)]),
);

export function transitionNamed(name: string): Transition {
  const found = TRANSITIONS.find((row) => row.name === name);
  if (!found) throw new Error(`no transition named ${name}`);
  return found;
}

/** The attempt states a trigger applies to: what the store's query for it selects. */
export function sourceAttemptStates(trigger: Trigger): AttemptState[] {
  const states = new Set<AttemptState>();
  for (const row of BY_TRIGGER.get(trigger) ?? [])
    for (const state of row.from?.attempt ?? []) states.add(state);
  return ATTEMPT_STATES.filter((state) => states.has(state));
}

/** The API's answers (409) where the table has no transition; the rest only reach logs. */
function refusal(trigger: Trigger, { job, attempt }: States): string {
  switch (trigger) {
    case "cancel-requested":
      return `Job is ${job} and can no longer be cancelled`;
    case "retry":
      return `Only a FAILED job can be retried; this job is ${job}`;
    case "resume-uploads":
      return `Only a job WAITING_FOR_STORAGE can resume uploads; this job is ${job}`;
    case "submit":
      return "a submission creates a new job";
    default:
      return `${trigger} changes nothing for a ${job} job whose attempt is ${attempt}`;
  }
}

function failureCodeOf(transition: Transition, facts: Facts): string {
  const code = transition.effects.failure?.code;
  if (code === undefined) throw new Error(`${transition.name} fails no attempt`);
  if (code !== "reported") return code;
  if (facts.reportedFailureCode === undefined) {
    throw new Error(`${transition.name} needs the failure code the Worker reported`);
  }
  return facts.reportedFailureCode;
}

function nextAttemptFollows(transition: Transition, states: States, facts: Facts): boolean {
  const { attemptNumber, maxAttempts } = facts;
  if (attemptNumber === undefined || maxAttempts === undefined) {
    throw new Error(`${transition.name} needs the attempt's number and MAX_ATTEMPTS`);
  }
  const next = afterAttemptFailed({
    failureCode: failureCodeOf(transition, facts),
    jobState: states.job,
    attemptNumber,
    maxAttempts,
    deadlinePassed: facts.jobDeadline.getTime() <= facts.now.getTime(),
  });
  return next === "next-attempt";
}

/** Why a guard does not hold, or undefined when it does. */
function unmet(guard: Guard, transition: Transition, states: States, facts: Facts): string | undefined {
  switch (guard) {
    case "completion-accepted":
      return facts.completionAccepted ? undefined : "the attempt's completion was not accepted";
    case "completion-not-accepted":
      return facts.completionAccepted
        ? "the attempt's completion was accepted: the Manager finishes it"
        : undefined;
    case "next-attempt-allowed":
      return nextAttemptFollows(transition, states, facts)
        ? undefined
        : "the failure is final, no attempt is left or the deadline passed";
    case "no-next-attempt":
      return nextAttemptFollows(transition, states, facts) ? "a next attempt follows" : undefined;
    case "uploads-resumable":
      if (!facts.keptOutputs) throw new Error(`${transition.name} needs what the Worker keeps`);
      return resumeUploadsRefusal({ ...facts.keptOutputs, now: facts.now, jobDeadline: facts.jobDeadline });
    default: {
      const unknown: never = guard;
      throw new Error(`unknown guard ${String(unknown)}`);
    }
  }
}

export type Resolution = { kind: "transition"; transition: Transition } | { kind: "refused"; reason: string };

/**
 * The transition a trigger makes from these states, or why it makes none. Facts are needed
 * only where a guard looks at them (the API's cancel and retry need none).
 */
export function resolve(trigger: Trigger, states: States, facts?: Facts): Resolution {
  const candidates = (BY_TRIGGER.get(trigger) ?? []).filter((row) => appliesFrom(row, states));
  let reason: string | undefined;
  for (const transition of candidates) {
    const why = unmetGuard(transition, states, facts);
    if (why === undefined) return { kind: "transition", transition };
    reason ??= why;
  }
  return { kind: "refused", reason: reason ?? refusal(trigger, states) };
}

/** Why one of a transition's guards does not hold, or undefined when all do. */
export function unmetGuard(transition: Transition, states: States, facts?: Facts): string | undefined {
  if (transition.guards.length === 0) return undefined;
  if (!facts) throw new Error(`${transition.name} needs facts`);
  for (const guard of transition.guards) {
    const why = unmet(guard, transition, states, facts);
    if (why !== undefined) return why;
  }
  return undefined;
}

const appliesFrom = (transition: Transition, states: States): boolean =>
  transition.from?.job.includes(states.job) === true && transition.from.attempt.includes(states.attempt);

/** The states of a job and its current attempt after a transition. */
const statesAfter = (states: States, transition: Transition): States => ({
  job: transition.to.job ?? states.job,
  attempt: transition.effects.nextAttempt ? NEW_ATTEMPT_STATE : (transition.to.attempt ?? states.attempt),
});

export interface Step {
  from: States | null;
  transition: Transition;
  to: States;
}

/**
 * Every (job, current attempt) pair a submitted job can reach, and each step between them,
 * taking any guard as one that may hold.
 */
export function reachable(): { states: States[]; steps: Step[] } {
  const key = (states: States) => `${states.job}/${states.attempt}`;
  const steps: Step[] = [];
  const seen = new Map<string, States>();
  const queue: States[] = [];
  const step = (from: States | null, transition: Transition, to: States) => {
    steps.push({ from, transition, to });
    if (seen.has(key(to))) return;
    seen.set(key(to), to);
    queue.push(to);
  };
  for (const row of TRANSITIONS) {
    if (row.from === null) step(null, row, { job: row.to.job, attempt: row.to.attempt } as States);
  }
  for (let states = queue.shift(); states; states = queue.shift()) {
    for (const row of TRANSITIONS) if (appliesFrom(row, states)) step(states, row, statesAfter(states, row));
  }
  return { states: [...seen.values()], steps };
}
