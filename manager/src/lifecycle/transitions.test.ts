import { ReportSchema } from "@tjm/protocol";
import { describe, expect, it } from "vitest";
import { isRetryableFailure } from "./failures.ts";
import { reachable, resolve, sourceAttemptStates, unmetGuard } from "./resolve.ts";
import {
  ATTEMPT_STATES,
  type AttemptState,
  HELD_ATTEMPT_STATES,
  JOB_STATES,
  type JobState,
  TERMINAL_JOB_STATES,
} from "./states.ts";
import { type Facts, GUARDS, reportTrigger, TRANSITIONS, TRIGGERS, type Trigger } from "./transitions.ts";

const NOW = new Date("2026-11-21T10:00:00Z");

/** Attempt 1 of 3, the deadline ahead, no completion accepted, a non-retryable reported code, outputs resumable. */
const FRESH: Facts = {
  now: NOW,
  jobDeadline: new Date("2026-11-24T10:00:00Z"),
  completionAccepted: false,
  attemptNumber: 1,
  maxAttempts: 3,
  reportedFailureCode: "ENCODE_FAILED",
  keptOutputs: {
    pauseExpiresAt: new Date("2026-11-22T10:00:00Z"),
    worker: { exists: true, disabled: false },
  },
};

/** Every combination of what the guards look at. */
const FACT_VARIANTS: Facts[] = [false, true].flatMap((completionAccepted) =>
  [1, 3].flatMap((attemptNumber) =>
    [FRESH.jobDeadline, new Date("2026-11-21T09:00:00Z")].flatMap((jobDeadline) =>
      ["ENCODE_FAILED", "WORKER_LOST"].flatMap((reportedFailureCode) =>
        [FRESH.keptOutputs, { pauseExpiresAt: null, worker: { exists: true, disabled: false } }].map(
          (keptOutputs) => ({
            ...FRESH,
            completionAccepted,
            attemptNumber,
            jobDeadline,
            reportedFailureCode,
            keptOutputs,
          }),
        ),
      ),
    ),
  ),
);

const PAIRS = JOB_STATES.flatMap((job) => ATTEMPT_STATES.map((attempt) => ({ job, attempt })));

const transitionName = (trigger: Trigger, job: JobState, attempt: AttemptState, facts: Facts) => {
  const resolution = resolve(trigger, { job, attempt }, facts);
  return resolution.kind === "transition" ? resolution.transition.name : "refused";
};

describe("the table's vocabulary", () => {
  it("has a trigger for every report type of the protocol", () => {
    const reportTypes = ReportSchema.options.map((option) => option.shape.type.value);
    expect(reportTypes.map((type) => reportTrigger({ type }))).toEqual(
      TRIGGERS.filter((trigger) => trigger.startsWith("report:")),
    );
  });

  it("names each transition once, gives every trigger a transition and uses every guard", () => {
    const names = TRANSITIONS.map((row) => row.name);
    expect(new Set(names).size).toBe(names.length);
    expect(TRIGGERS.filter((trigger) => !TRANSITIONS.some((row) => row.trigger === trigger))).toEqual([]);
    expect(GUARDS.filter((guard) => !TRANSITIONS.some((row) => row.guards.includes(guard)))).toEqual([]);
  });

  it("applies from and leads to valid job and attempt states only", () => {
    for (const row of TRANSITIONS) {
      const jobs: readonly string[] = [...(row.from?.job ?? []), ...(row.to.job ? [row.to.job] : [])];
      const attempts: readonly string[] = [
        ...(row.from?.attempt ?? []),
        ...(row.to.attempt ? [row.to.attempt] : []),
      ];
      expect(
        jobs.filter((state) => !(JOB_STATES as readonly string[]).includes(state)),
        row.name,
      ).toEqual([]);
      expect(
        attempts.filter((state) => !(ATTEMPT_STATES as readonly string[]).includes(state)),
        row.name,
      ).toEqual([]);
      if (row.from) expect(row.from.job.length * row.from.attempt.length, row.name).toBeGreaterThan(0);
    }
  });
});

describe("every (job state, attempt state, trigger)", () => {
  it("is one transition or a refusal with a reason, whatever the guards see", () => {
    let checked = 0;
    for (const trigger of TRIGGERS) {
      for (const states of PAIRS) {
        for (const facts of FACT_VARIANTS) {
          const holding = TRANSITIONS.filter(
            (row) =>
              row.trigger === trigger &&
              row.from?.job.includes(states.job) &&
              row.from.attempt.includes(states.attempt) &&
              unmetGuard(row, states, facts) === undefined,
          );
          const resolution = resolve(trigger, states, facts);
          expect(holding.length, `${trigger} from ${states.job}/${states.attempt}`).toBeLessThanOrEqual(1);
          if (holding[0]) expect(resolution).toEqual({ kind: "transition", transition: holding[0] });
          else expect(resolution).toMatchObject({ kind: "refused", reason: expect.stringMatching(/\w/) });
          checked++;
        }
      }
    }
    expect(checked).toBe(TRIGGERS.length * JOB_STATES.length * ATTEMPT_STATES.length * FACT_VARIANTS.length);
  });

  /** The pairs a job can be in (and the one the sweeper's tests arrange: a cancel during dispatch). */
  const COLUMNS = {
    "QUEUED/CREATED": { job: "QUEUED", attempt: "CREATED" },
    "QUEUED/DISPATCHED": { job: "QUEUED", attempt: "DISPATCHED" },
    "RUNNING/RUNNING": { job: "RUNNING", attempt: "RUNNING" },
    "RUNNING/UPLOADING": { job: "RUNNING", attempt: "UPLOADING" },
    "RUNNING/UPLOADING, completion accepted": {
      job: "RUNNING",
      attempt: "UPLOADING",
      completionAccepted: true,
    },
    "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE": { job: "WAITING_FOR_STORAGE", attempt: "WAITING_FOR_STORAGE" },
    "CANCEL_REQUESTED/DISPATCHED": { job: "CANCEL_REQUESTED", attempt: "DISPATCHED" },
    "CANCEL_REQUESTED/RUNNING": { job: "CANCEL_REQUESTED", attempt: "RUNNING" },
    "CANCEL_REQUESTED/UPLOADING": { job: "CANCEL_REQUESTED", attempt: "UPLOADING" },
    "CANCEL_REQUESTED/UPLOADING, completion accepted": {
      job: "CANCEL_REQUESTED",
      attempt: "UPLOADING",
      completionAccepted: true,
    },
    "CANCEL_REQUESTED/WAITING_FOR_STORAGE": { job: "CANCEL_REQUESTED", attempt: "WAITING_FOR_STORAGE" },
    "CANCELLED/CANCELLED": { job: "CANCELLED", attempt: "CANCELLED" },
    "CANCELLED/FAILED": { job: "CANCELLED", attempt: "FAILED" },
    "COMPLETED/SUCCEEDED": { job: "COMPLETED", attempt: "SUCCEEDED" },
    "FAILED/FAILED": { job: "FAILED", attempt: "FAILED" },
  } as const satisfies Record<string, { job: JobState; attempt: AttemptState; completionAccepted?: boolean }>;
  type Column = keyof typeof COLUMNS;

  const held = (name: string, ...columns: Column[]) => Object.fromEntries(columns.map((c) => [c, name]));
  const CANCELLING_HELD: Column[] = [
    "CANCEL_REQUESTED/DISPATCHED",
    "CANCEL_REQUESTED/RUNNING",
    "CANCEL_REQUESTED/UPLOADING",
    "CANCEL_REQUESTED/UPLOADING, completion accepted",
    "CANCEL_REQUESTED/WAITING_FOR_STORAGE",
  ];
  const CANCELLING_UNFINISHED: Column[] = [
    "CANCEL_REQUESTED/DISPATCHED",
    "CANCEL_REQUESTED/RUNNING",
    "CANCEL_REQUESTED/UPLOADING",
    "CANCEL_REQUESTED/WAITING_FOR_STORAGE",
  ];
  const NOT_CANCELLING_HELD: Column[] = [
    "QUEUED/DISPATCHED",
    "RUNNING/RUNNING",
    "RUNNING/UPLOADING",
    "RUNNING/UPLOADING, completion accepted",
    "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE",
  ];

  /** With FRESH facts; every column not named is refused. */
  const EXPECTED: Record<Trigger, Partial<Record<Column, string>>> = {
    submit: {},
    "cancel-requested": {
      ...held("cancel-now", "QUEUED/CREATED", "QUEUED/DISPATCHED"),
      ...held(
        "cancel-held-by-worker",
        "RUNNING/RUNNING",
        "RUNNING/UPLOADING",
        "RUNNING/UPLOADING, completion accepted",
        "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE",
      ),
      ...held("already-cancelling", ...CANCELLING_HELD, "CANCELLED/CANCELLED", "CANCELLED/FAILED"),
    },
    "resume-uploads": held("resume-uploads-requested", "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE"),
    retry: held("retried", "FAILED/FAILED"),
    "lease-dispatched": held("lease-dispatched", "QUEUED/CREATED"),
    "report:accepted": held("lease-accepted", "QUEUED/DISPATCHED"),
    "report:rejected": {
      ...held("lease-rejected.next-attempt", "QUEUED/DISPATCHED"),
      ...held("lease-rejected.job-cancelled", "CANCEL_REQUESTED/DISPATCHED"),
    },
    "report:started": held("started-before-accepted", "QUEUED/DISPATCHED"),
    "report:encoded": {
      ...held("encoded-before-accepted", "QUEUED/DISPATCHED"),
      ...held("encoded", "RUNNING/RUNNING", "CANCEL_REQUESTED/DISPATCHED", "CANCEL_REQUESTED/RUNNING"),
    },
    "report:upload-paused": {
      ...held(
        "uploads-paused",
        "RUNNING/RUNNING",
        "RUNNING/UPLOADING",
        "RUNNING/UPLOADING, completion accepted",
      ),
      ...held(
        "uploads-paused-while-cancelling",
        "CANCEL_REQUESTED/RUNNING",
        "CANCEL_REQUESTED/UPLOADING",
        "CANCEL_REQUESTED/UPLOADING, completion accepted",
      ),
    },
    "report:upload-resumed": {
      ...held("uploads-resumed", "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE"),
      ...held("uploads-resumed-while-cancelling", "CANCEL_REQUESTED/WAITING_FOR_STORAGE"),
    },
    "report:input-waiting": {
      ...held("input-waiting-before-accepted", "QUEUED/DISPATCHED"),
      ...held("input-waiting", "RUNNING/RUNNING", "CANCEL_REQUESTED/RUNNING"),
    },
    "report:input-resumed": held("input-resumed", "RUNNING/RUNNING", "CANCEL_REQUESTED/RUNNING"),
    "report:completed": {
      ...held(
        "completion-accepted-job-running",
        "QUEUED/DISPATCHED",
        "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE",
      ),
      ...held(
        "completion-accepted",
        "RUNNING/RUNNING",
        "RUNNING/UPLOADING",
        "RUNNING/UPLOADING, completion accepted",
      ),
      ...held("completed-after-cancel", ...CANCELLING_HELD),
    },
    "report:failed": {
      ...held("attempt-failed.job-failed", ...NOT_CANCELLING_HELD),
      ...held("attempt-failed.job-cancelled", ...CANCELLING_HELD),
    },
    "report:cancelled": {
      ...held("abandoned.next-attempt", ...NOT_CANCELLING_HELD),
      ...held("cancel-confirmed", ...CANCELLING_HELD),
    },
    "promotion-done": held(
      "promotion-done",
      "RUNNING/UPLOADING, completion accepted",
      "CANCEL_REQUESTED/UPLOADING, completion accepted",
    ),
    "promotion-failed": {
      ...held("output-mismatch.job-failed", "RUNNING/UPLOADING, completion accepted"),
      ...held("output-mismatch.job-cancelled", "CANCEL_REQUESTED/UPLOADING, completion accepted"),
    },
    "dispatch-timeout": {
      ...held("dispatch-timeout.next-attempt", "QUEUED/DISPATCHED"),
      ...held("dispatch-timeout.job-cancelled", "CANCEL_REQUESTED/DISPATCHED"),
    },
    "retention-expired": {
      ...held("retention-expired.job-failed", "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE"),
      ...held("retention-expired.job-cancelled", "CANCEL_REQUESTED/WAITING_FOR_STORAGE"),
    },
    "deadline-exceeded": {
      ...held(
        "deadline-exceeded.job-failed",
        "QUEUED/CREATED",
        "QUEUED/DISPATCHED",
        "RUNNING/RUNNING",
        "RUNNING/UPLOADING",
        "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE",
      ),
      ...held("deadline-exceeded.job-cancelled", ...CANCELLING_UNFINISHED),
    },
    "cancel-unconfirmed": held("cancel-resent", ...CANCELLING_UNFINISHED),
    "worker-offline": {
      ...held("worker-offline.next-attempt", "QUEUED/DISPATCHED", "RUNNING/RUNNING", "RUNNING/UPLOADING"),
      ...held(
        "worker-offline.job-cancelled",
        "CANCEL_REQUESTED/DISPATCHED",
        "CANCEL_REQUESTED/RUNNING",
        "CANCEL_REQUESTED/UPLOADING",
      ),
    },
    "worker-restarted": {
      ...held(
        "worker-restarted.next-attempt",
        "QUEUED/DISPATCHED",
        "RUNNING/RUNNING",
        "RUNNING/UPLOADING",
        "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE",
      ),
      ...held("worker-restarted.job-cancelled", ...CANCELLING_UNFINISHED),
    },
    "worker-disabled": {
      ...held(
        "worker-disabled.next-attempt",
        "QUEUED/DISPATCHED",
        "RUNNING/RUNNING",
        "RUNNING/UPLOADING",
        "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE",
      ),
      ...held("worker-disabled.job-cancelled", ...CANCELLING_UNFINISHED),
    },
  };

  it.each(TRIGGERS)("%s does what the lifecycle says in every state a job can be in", (trigger) => {
    const answers = Object.fromEntries(
      Object.entries(COLUMNS).map(([column, { job, attempt, ...facts }]) => [
        column,
        transitionName(trigger, job, attempt, { ...FRESH, ...facts }),
      ]),
    );
    const expected = Object.fromEntries(
      Object.keys(COLUMNS).map((column) => [column, EXPECTED[trigger][column as Column] ?? "refused"]),
    );
    expect(answers).toEqual(expected);
  });
});

describe("reachable states", () => {
  const key = ({ job, attempt }: { job: JobState; attempt: AttemptState }) => `${job}/${attempt}`;

  it("a submitted job and its current attempt reach exactly these pairs", () => {
    expect(reachable().states.map(key).sort()).toEqual(
      [
        "QUEUED/CREATED",
        "QUEUED/DISPATCHED",
        "RUNNING/RUNNING",
        "RUNNING/UPLOADING",
        "WAITING_FOR_STORAGE/WAITING_FOR_STORAGE",
        "CANCEL_REQUESTED/RUNNING",
        "CANCEL_REQUESTED/UPLOADING",
        "CANCEL_REQUESTED/WAITING_FOR_STORAGE",
        "CANCELLED/CANCELLED",
        "CANCELLED/FAILED",
        "COMPLETED/SUCCEEDED",
        "FAILED/FAILED",
      ].sort(),
    );
  });

  it("every reachable pair can still end: a terminal job state is reachable from each", () => {
    const { states, steps } = reachable();
    for (const start of states) {
      const seen = new Set([key(start)]);
      const queue = [start];
      for (let at = queue.shift(); at; at = queue.shift()) {
        for (const step of steps) {
          if (!step.from || key(step.from) !== key(at) || seen.has(key(step.to))) continue;
          seen.add(key(step.to));
          queue.push(step.to);
        }
      }
      const ends = [...seen].filter((pair) =>
        (TERMINAL_JOB_STATES as readonly string[]).includes(pair.split("/")[0] as string),
      );
      expect(ends.length, key(start)).toBeGreaterThan(0);
    }
  });
});

describe("terminal job states", () => {
  it("move only by a retry of a FAILED job; a cancel of a CANCELLED one changes nothing", () => {
    const found = new Set<string>();
    for (const job of TERMINAL_JOB_STATES) {
      for (const attempt of ATTEMPT_STATES) {
        for (const trigger of TRIGGERS) {
          for (const facts of FACT_VARIANTS) {
            const name = transitionName(trigger, job, attempt, facts);
            if (name !== "refused") found.add(`${job}: ${name}`);
          }
        }
      }
    }
    expect([...found].sort()).toEqual(["CANCELLED: already-cancelling", "FAILED: retried"]);
    const unchanged = TRANSITIONS.find((row) => row.name === "already-cancelling");
    expect(unchanged).toMatchObject({ to: {}, effects: { wake: [] } });
    expect(Object.keys(unchanged?.effects ?? {})).toEqual(["wake"]);
  });
});

describe("effects", () => {
  it("announce job.updated exactly when the job's state changes, it gets a next attempt, or its input wait starts or ends", () => {
    for (const row of TRANSITIONS) {
      if (!row.from) {
        expect(row.effects.event, row.name).toBe("job.created");
        continue;
      }
      for (const job of row.from.job) {
        const changes =
          (row.to.job !== undefined && row.to.job !== job) ||
          row.effects.nextAttempt === true ||
          row.effects.inputWait !== undefined;
        expect(row.effects.event === "job.updated", `${row.name} from ${job}`).toBe(changes);
      }
    }
  });

  it("a failure ends the attempt FAILED and wakes the dispatcher; a next attempt follows only a retryable code or the Worker's own", () => {
    const failures = TRANSITIONS.filter((row) => row.effects.failure);
    expect(failures.length).toBeGreaterThan(0);
    for (const row of failures) {
      expect(row.to.attempt, row.name).toBe("FAILED");
      expect(row.effects.wake, row.name).toContain("dispatcher");
      const code = row.effects.failure?.code ?? "";
      if (row.effects.nextAttempt)
        expect(code === "reported" || isRetryableFailure(code), row.name).toBe(true);
    }
  });

  it("a Worker lost or restarted is told to cancel what it held: a lease it never read waits in its consumer", () => {
    const lostOrRestarted = TRANSITIONS.filter((row) =>
      ["worker-offline", "worker-restarted"].includes(row.trigger),
    );
    expect(lostOrRestarted.length).toBeGreaterThan(0);
    for (const row of lostOrRestarted) expect(row.effects.command, row.name).toBe("cancel");
  });

  it("a completed report leaves the attempt UPLOADING and wakes the promoter; only promotion-done makes it SUCCEEDED", () => {
    const completions = TRANSITIONS.filter((row) => row.effects.acceptCompletion);
    expect(completions.map((row) => row.name)).toEqual([
      "completion-accepted",
      "completion-accepted-job-running",
    ]);
    for (const row of completions) {
      expect(row.trigger).toBe("report:completed");
      expect(row.to.attempt).toBe("UPLOADING");
      expect(row.effects.wake).toEqual(["promoter"]);
    }
    const succeeded = TRANSITIONS.filter((row) => row.to.attempt === "SUCCEEDED");
    expect(succeeded.map((row) => [row.name, row.guards, row.to.job])).toEqual([
      ["promotion-done", ["completion-accepted"], "COMPLETED"],
    ]);
  });

  it("tell the stores which attempts each sweep and change of a Worker's life selects", () => {
    expect(sourceAttemptStates("lease-dispatched")).toEqual(["CREATED"]);
    expect(sourceAttemptStates("dispatch-timeout")).toEqual(["DISPATCHED"]);
    expect(sourceAttemptStates("retention-expired")).toEqual(["WAITING_FOR_STORAGE"]);
    expect(sourceAttemptStates("deadline-exceeded")).toEqual(["CREATED", ...HELD_ATTEMPT_STATES]);
    expect(sourceAttemptStates("cancel-unconfirmed")).toEqual([...HELD_ATTEMPT_STATES]);
    expect(sourceAttemptStates("promotion-done")).toEqual(["UPLOADING"]);
    // Outputs waiting for storage survive on the disk of a Worker that is only away.
    expect(sourceAttemptStates("worker-offline")).toEqual(["DISPATCHED", "RUNNING", "UPLOADING"]);
    expect(sourceAttemptStates("worker-restarted")).toEqual([...HELD_ATTEMPT_STATES]);
    expect(sourceAttemptStates("worker-disabled")).toEqual([...HELD_ATTEMPT_STATES]);
  });
});
