import { describe, expect, it } from "vitest";
import {
  ATTEMPT_EVENTS,
  ATTEMPT_PHASES,
  type AttemptEffect,
  type AttemptEvent,
  type AttemptPhase,
  holdsSlot,
  keepsOutputs,
  next,
  PHASE_TRANSITIONS,
} from "./phases.ts";

/**
 * Every event in every phase: the next phase and its effects, or "-" for a refusal. Written out
 * in full, so a changed row shows here as the decision it is.
 */
const EXPECTED: Record<AttemptPhase, Partial<Record<AttemptEvent, string>>> = {
  accepting: {
    "accepted-stored": "preparing",
    cancel: "cancelling: stop-work",
    stop: "abandoning: stop-work",
    drop: "ended: abort-uploads, delete-files",
  },
  preparing: {
    "input-ready": "encoding: report-started",
    "input-waiting": "preparing: report-input-waiting",
    "input-resumed": "preparing: report-input-resumed",
    "step-failed": "failing: upload-log, abort-uploads, delete-files",
    cancel: "cancelling: stop-work",
    stop: "abandoning: stop-work",
    drop: "ended: abort-uploads, delete-files",
  },
  encoding: {
    "input-waiting": "encoding: report-input-waiting",
    "input-resumed": "encoding: report-input-resumed",
    encoded: "uploading: save-record, report-encoded",
    "step-failed": "failing: upload-log, abort-uploads, delete-files",
    cancel: "cancelling: stop-work",
    stop: "abandoning: stop-work",
    drop: "ended: abort-uploads, delete-files",
  },
  uploading: {
    "storage-lost": "waiting_for_storage: save-record, report-upload-paused",
    uploaded: "completing: report-completed",
    "step-failed": "failing: upload-log, abort-uploads, delete-files",
    cancel: "cancelling: stop-work",
    stop: "stopping: stop-work",
    drop: "ended: abort-uploads, delete-files",
  },
  waiting_for_storage: {
    "resume-requested": "uploading: save-record, report-upload-resumed",
    cancel: "cancelling: stop-work",
    stop: "stopping: stop-work",
    drop: "ended: abort-uploads, delete-files",
  },
  completing: { reported: "ended: delete-files" },
  failing: { "cleaned-up": "reporting: report-failed" },
  cancelling: { unwound: "reporting: abort-uploads, delete-files, report-cancelled" },
  abandoning: { unwound: "ended: abort-uploads, delete-files" },
  stopping: { unwound: "ended" },
  reporting: { reported: "ended" },
  ended: {},
};

function walk(phase: AttemptPhase, event: AttemptEvent): string {
  const resolution = next(phase, event);
  if (resolution.kind === "refused") return "-";
  return resolution.effects.length === 0
    ? resolution.to
    : `${resolution.to}: ${resolution.effects.join(", ")}`;
}

const REPORTS: readonly AttemptEffect[] = ["report-completed", "report-failed", "report-cancelled"];

interface Path {
  events: AttemptEvent[];
  effects: AttemptEffect[];
}

/** Every way from `phase` to `ended`: its events and the effects met on the way (no phase twice). */
function pathsToEnd(phase: AttemptPhase, seen: ReadonlySet<AttemptPhase> = new Set()): Path[] {
  if (phase === "ended") return [{ events: [], effects: [] }];
  const paths: Path[] = [];
  for (const event of ATTEMPT_EVENTS) {
    const resolution = next(phase, event);
    if (resolution.kind === "refused" || resolution.to === phase || seen.has(resolution.to)) continue;
    for (const rest of pathsToEnd(resolution.to, new Set([...seen, phase]))) {
      paths.push({ events: [event, ...rest.events], effects: [...resolution.effects, ...rest.effects] });
    }
  }
  return paths;
}

describe("the attempt's phase table", () => {
  it("answers every event in every phase as written out above", () => {
    for (const phase of ATTEMPT_PHASES) {
      for (const event of ATTEMPT_EVENTS) {
        expect(walk(phase, event), `${event} in ${phase}`).toBe(EXPECTED[phase][event] ?? "-");
      }
    }
  });

  it("has one row at most for each event in each phase", () => {
    for (const phase of ATTEMPT_PHASES) {
      for (const event of ATTEMPT_EVENTS) {
        const rows = PHASE_TRANSITIONS.filter((row) => row.event === event && row.from.includes(phase));
        expect(rows.length, `${event} in ${phase}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it("reaches every phase from a new lease or a restored record, and ends from every phase", () => {
    const reached = new Set<AttemptPhase>(["accepting", "uploading", "waiting_for_storage"]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const row of PHASE_TRANSITIONS) {
        const to = row.to;
        if (to && !reached.has(to) && row.from.some((phase) => reached.has(phase))) {
          reached.add(to);
          grew = true;
        }
      }
    }
    expect([...reached].sort()).toEqual([...ATTEMPT_PHASES].sort());
    for (const phase of ATTEMPT_PHASES) expect(pathsToEnd(phase).length, phase).toBeGreaterThan(0);
  });

  it("sends exactly one last report on every way to the end, none where the agent stops or drops it", () => {
    for (const start of ["accepting", "uploading", "waiting_for_storage"] as const) {
      for (const path of pathsToEnd(start)) {
        const reports = path.effects.filter((effect) => REPORTS.includes(effect));
        const silent = path.events.includes("stop") || path.events.includes("drop");
        expect(reports, path.events.join(" > ")).toHaveLength(silent ? 0 : 1);
      }
    }
  });

  it("writes the record whenever an attempt enters a phase whose outputs a restart keeps", () => {
    for (const row of PHASE_TRANSITIONS) {
      if (row.to && keepsOutputs(row.to))
        expect(row.effects, `${row.event} into ${row.to}`).toContain("save-record");
    }
  });

  it("frees the slot for an attempt waiting for storage or whose last report is on its way", () => {
    expect(ATTEMPT_PHASES.filter((phase) => !holdsSlot(phase))).toEqual([
      "waiting_for_storage",
      "completing",
      "cancelling",
      "reporting",
      "ended",
    ]);
  });
});
