import { describe, expect, it } from "vitest";
import { FAILURE_CODES } from "../lifecycle/failures.ts";
import { isTerminalAttemptState } from "../lifecycle/states.ts";
import { TRANSITIONS } from "../lifecycle/transitions.ts";
import { type AttemptEnding, attemptEnding, leasedAttempt } from "./outcomes.ts";
import { failureCodeLabel, priorityBand } from "./series.ts";

const OUTCOME_OF = { SUCCEEDED: "succeeded", FAILED: "failed", CANCELLED: "cancelled" } as const;

describe("attempt outcomes read from published announcements", () => {
  // The counter relies on this: every transition that ends an attempt announces it, and the
  // announcement alone tells how it ended; no other transition's announcement looks like an end.
  const cases = TRANSITIONS.flatMap((transition) =>
    (transition.from?.job ?? []).map((jobState) => ({ transition, jobState })),
  );

  it.each(cases.map(({ transition, jobState }) => [transition.name, jobState, transition] as const))(
    "%s from a %s job is counted as the attempt's end exactly when it ends it",
    (_, jobState, transition) => {
      const ends = transition.to.attempt !== undefined && isTerminalAttemptState(transition.to.attempt);
      const code =
        transition.effects.failure?.code === "reported" ? "ENCODE_FAILED" : transition.effects.failure?.code;
      const announced =
        transition.effects.event === "job.updated"
          ? attemptEnding({
              kind: "job.updated",
              payload: {
                from: jobState,
                to: transition.to.job ?? jobState,
                ...(code ? { failureCode: code } : {}),
              },
            })
          : undefined;
      const expected: AttemptEnding | undefined = ends
        ? {
            outcome: OUTCOME_OF[transition.to.attempt as keyof typeof OUTCOME_OF],
            failureCode: code ?? "none",
          }
        : undefined;
      if (ends) expect(transition.effects.event).toBe("job.updated");
      expect(announced).toEqual(expected);
    },
  );

  it("counts nothing for other kinds of rows", () => {
    expect(attemptEnding({ kind: "job.created", payload: { to: "QUEUED" } })).toBeUndefined();
    expect(
      attemptEnding({ kind: "worker.command", payload: { type: "cancel", to: "CANCELLED" } }),
    ).toBeUndefined();
  });
});

describe("labels stay bounded", () => {
  it("keeps known failure codes and folds any other a Worker reports into OTHER", () => {
    expect(failureCodeLabel(FAILURE_CODES.workerLost)).toBe("WORKER_LOST");
    expect(failureCodeLabel("STORAGE_UNAVAILABLE")).toBe("STORAGE_UNAVAILABLE");
    expect(failureCodeLabel("MY_OWN_CODE_1234")).toBe("OTHER");
    expect(failureCodeLabel(undefined)).toBe("none");
  });

  it.each([
    [1000, "high"],
    [1, "high"],
    [0, "normal"],
    [-1, "low"],
    [-1000, "low"],
  ] as const)("priority %d is in the %s band", (priority, band) => {
    expect(priorityBand(priority)).toBe(band);
  });

  it("reads the attempt of a lease command only", () => {
    const attemptId = "0b7e7a4e-8f1b-4c8e-9a57-2f4b8b0f1c3d";
    expect(leasedAttempt({ kind: "worker.command", payload: { type: "lease", attemptId } })).toBe(attemptId);
    expect(leasedAttempt({ kind: "worker.command", payload: { type: "cancel", attemptId } })).toBeUndefined();
    expect(leasedAttempt({ kind: "job.updated", payload: { type: "lease", attemptId } })).toBeUndefined();
  });
});
