/**
 * The deadlines the Manager enforces by itself, at their boundaries, table-driven. Rows are
 * put in place in SQL (deadlines relative to the database's now()), then two replicas sweep
 * at once (Sweeper.sweep(), called directly; their background loops are off): only the rows
 * past a deadline fail, each once, with exactly one next attempt when the rules allow one.
 *
 * Lost Workers are not the sweeper's: each replica's WorkerMonitor judges silence on its own
 * clock. Two monitors on one schema, driven by a clock the test sets to the millisecond, show
 * the WORKER_LOST boundary the same way.
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import { silentLogger } from "@tjm/platform";
import { encodeMessage, HeartbeatSchema, PROTOCOL_VERSION, subjects } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Broker } from "../../manager/src/platform/broker.ts";
import { WorkerMonitor } from "../../manager/src/workers/index.ts";
import { TestManager } from "../harness/manager.ts";
import { type EnrolledWorker, enroll } from "../harness/workers.ts";

const MAX_ATTEMPTS = 3;

let a: TestManager;
let b: TestManager;
let projectId: string;

beforeAll(async () => {
  // No background work: nothing moves unless the test calls it.
  const settings = { background: false, maxAttempts: MAX_ATTEMPTS, dispatchTimeoutMs: 30_000 };
  a = await TestManager.start(settings);
  b = await TestManager.start({ ...settings, schema: a.schema });
  ({ projectId } = await a.createProject());
});

afterAll(async () => {
  await b?.close({ keepStreams: true });
  await a?.close();
});

/** Enrolls a Worker (registration needs the broker, which connects in the background). */
async function enrolled(): Promise<EnrolledWorker> {
  let worker: EnrolledWorker | undefined;
  await waitFor("a registration", async () => {
    worker = await enroll(a).catch(() => undefined);
    return worker !== undefined;
  });
  return worker as EnrolledWorker;
}

const submit = () => a.submitJob(sampleSubmission(projectId));

type AttemptState =
  | "CREATED"
  | "DISPATCHED"
  | "RUNNING"
  | "UPLOADING"
  | "WAITING_FOR_STORAGE"
  | "SUCCEEDED"
  | "FAILED"
  | "CANCELLED";
type JobState =
  | "QUEUED"
  | "RUNNING"
  | "CANCEL_REQUESTED"
  | "CANCELLED"
  | "COMPLETED"
  | "FAILED"
  | "WAITING_FOR_STORAGE";

/** Intervals are PostgreSQL intervals from now(), e.g. "-1 millisecond"; unset means none. */
interface Arrangement {
  attemptNumber?: number;
  attempt: AttemptState;
  job: JobState;
  dispatchDeadline?: string;
  jobDeadline?: string;
  pauseExpires?: string;
  completionAccepted?: boolean;
}

interface Outcome {
  attempt: AttemptState;
  failureCode: string | null;
  job: JobState;
  /** A next attempt (CREATED, current, with a higher fencing token) follows. */
  next: boolean;
  /** The Worker holding the attempt is told to let it go. */
  cancel: boolean;
}

/**
 * Puts a submitted job and its attempt in the arranged state: attempts before the current one
 * exist as FAILED, fencing tokens increase, and a held attempt belongs to `worker`.
 */
async function arrange(jobId: string, worker: EnrolledWorker, row: Arrangement): Promise<string> {
  const n = row.attemptNumber ?? 1;
  const held = row.attempt !== "CREATED";
  return a.sql.begin(async (tx) => {
    const [job] = await tx<{ currentAttemptId: string }[]>`
      select current_attempt_id from jobs where id = ${jobId} for update`;
    const attemptId = job?.currentAttemptId as string;
    await tx`
      update attempts set attempt_number = ${n}, fencing_token = ${2 * n}, state = ${row.attempt},
        worker_id = ${held ? worker.workerId : null}, instance_id = ${held ? worker.instanceId : null},
        dispatched_at = case when ${held} then now() - interval '1 minute' end,
        dispatch_deadline = now() + ${row.dispatchDeadline ?? null}::interval,
        accepted_at = case when ${row.attempt} not in ('CREATED', 'DISPATCHED') then now() end,
        completion_accepted_at = case when ${row.completionAccepted ?? false} then now() end,
        result = case when ${row.completionAccepted ?? false} then ${tx.json({ outputs: [], logsUri: "s3://media-out/log" })}::jsonb end,
        upload_paused_at = case when ${row.pauseExpires ?? null}::interval is not null then now() - interval '1 hour' end,
        upload_pause_expires_at = now() + ${row.pauseExpires ?? null}::interval,
        ended_at = case when ${row.attempt} in ('SUCCEEDED', 'FAILED', 'CANCELLED') then now() end
      where id = ${attemptId}`;
    for (let earlier = 1; earlier < n; earlier++) {
      await tx`
        insert into attempts (id, job_id, attempt_number, state, fencing_token, failure_code, failure_message,
                              worker_id, instance_id, ended_at, created_at, updated_at)
        values (${crypto.randomUUID()}, ${jobId}, ${earlier}, 'FAILED', ${2 * earlier}, 'DISPATCH_TIMEOUT', 'earlier',
                ${worker.workerId}, ${worker.instanceId}, now(), now(), now())`;
    }
    await tx`
      update jobs set state = ${row.job}, last_fencing_token = ${2 * n},
        deadline_at = now() + coalesce(${row.jobDeadline ?? null}::interval, interval '72 hours')
      where id = ${jobId}`;
    return attemptId;
  });
}

interface Observed {
  job: JobState;
  attempts: {
    id: string;
    attemptNumber: number;
    state: string;
    failureCode: string | null;
    fencingToken: string;
  }[];
  currentAttemptId: string;
  cancels: number;
}

async function observe(jobId: string, attemptId: string): Promise<Observed> {
  const [job] = await a.sql<{ state: JobState; currentAttemptId: string }[]>`
    select state, current_attempt_id from jobs where id = ${jobId}`;
  const attempts = await a.sql<Observed["attempts"]>`
    select id, attempt_number, state, failure_code, fencing_token from attempts
    where job_id = ${jobId} order by attempt_number`;
  const [cancels] = await a.sql<{ count: number }[]>`
    select count(*)::int as count from outbox
    where kind = 'worker.command' and payload->>'type' = 'cancel' and payload->>'attemptId' = ${attemptId}`;
  return {
    job: job?.state as JobState,
    attempts,
    currentAttemptId: job?.currentAttemptId as string,
    cancels: cancels?.count ?? 0,
  };
}

/** The arranged attempt's outcome, checked against the expectation. */
function check(observed: Observed, attemptId: string, row: Arrangement, outcome: Outcome): void {
  const n = row.attemptNumber ?? 1;
  const attempt = observed.attempts.find((entry) => entry.id === attemptId);
  expect(attempt).toMatchObject({
    attemptNumber: n,
    state: outcome.attempt,
    failureCode: outcome.failureCode,
  });
  expect(observed.job).toBe(outcome.job);
  expect(observed.cancels).toBe(outcome.cancel ? 1 : 0);
  if (outcome.next) {
    expect(observed.attempts.map((entry) => entry.attemptNumber)).toEqual(
      Array.from({ length: n + 1 }, (_, index) => index + 1),
    );
    const next = observed.attempts.at(-1);
    expect(next).toMatchObject({ attemptNumber: n + 1, state: "CREATED", failureCode: null });
    expect(observed.currentAttemptId).toBe(next?.id);
    expect(Number(next?.fencingToken)).toBeGreaterThan(2 * n);
  } else {
    expect(observed.attempts).toHaveLength(n);
    expect(observed.currentAttemptId).toBe(attemptId);
  }
}

const PAST = "-1 millisecond";
const unchanged = (row: Arrangement): Outcome => ({
  attempt: row.attempt,
  failureCode: null,
  job: row.job,
  next: false,
  cancel: false,
});

/** [what, arrangement, outcome after one sweep of both replicas] */
const SWEEP_TABLE: [string, Arrangement, Outcome | "unchanged"][] = [
  // Dispatch deadline: only DISPATCHED attempts past it.
  [
    "DISPATCHED, dispatch deadline 3 s ahead",
    { attempt: "DISPATCHED", job: "QUEUED", dispatchDeadline: "3 seconds" },
    "unchanged",
  ],
  [
    "DISPATCHED, dispatch deadline 1 ms ago, attempt 1 of 3",
    { attempt: "DISPATCHED", job: "QUEUED", dispatchDeadline: PAST },
    { attempt: "FAILED", failureCode: "DISPATCH_TIMEOUT", job: "QUEUED", next: true, cancel: true },
  ],
  [
    "DISPATCHED, dispatch deadline 1 ms ago, attempt 2 of 3",
    { attemptNumber: 2, attempt: "DISPATCHED", job: "QUEUED", dispatchDeadline: PAST },
    { attempt: "FAILED", failureCode: "DISPATCH_TIMEOUT", job: "QUEUED", next: true, cancel: true },
  ],
  [
    "DISPATCHED, dispatch deadline 1 ms ago, at MAX_ATTEMPTS",
    { attemptNumber: MAX_ATTEMPTS, attempt: "DISPATCHED", job: "QUEUED", dispatchDeadline: PAST },
    { attempt: "FAILED", failureCode: "DISPATCH_TIMEOUT", job: "FAILED", next: false, cancel: true },
  ],
  [
    "DISPATCHED, dispatch deadline 1 ms ago, cancel requested",
    { attempt: "DISPATCHED", job: "CANCEL_REQUESTED", dispatchDeadline: PAST },
    { attempt: "FAILED", failureCode: "DISPATCH_TIMEOUT", job: "CANCELLED", next: false, cancel: true },
  ],
  [
    "DISPATCHED, dispatch deadline 1 ms ago, job deadline passed too",
    { attempt: "DISPATCHED", job: "QUEUED", dispatchDeadline: PAST, jobDeadline: PAST },
    { attempt: "FAILED", failureCode: "DISPATCH_TIMEOUT", job: "FAILED", next: false, cancel: true },
  ],
  [
    "RUNNING (accepted in time), dispatch deadline an hour ago",
    { attempt: "RUNNING", job: "RUNNING", dispatchDeadline: "-1 hour" },
    "unchanged",
  ],
  [
    "FAILED (terminal), dispatch deadline an hour ago",
    { attempt: "FAILED", job: "FAILED", dispatchDeadline: "-1 hour" },
    "unchanged",
  ],
  [
    "SUCCEEDED (terminal), dispatch deadline an hour ago",
    { attempt: "SUCCEEDED", job: "COMPLETED", dispatchDeadline: "-1 hour" },
    "unchanged",
  ],
  [
    "CANCELLED (terminal), dispatch deadline an hour ago",
    { attempt: "CANCELLED", job: "CANCELLED", dispatchDeadline: "-1 hour" },
    "unchanged",
  ],
  // Job deadline (JOB_DEADLINE_HOURS): every unfinished job past it, whoever holds it.
  [
    "QUEUED (no Worker yet), job deadline 1 ms ago",
    { attempt: "CREATED", job: "QUEUED", jobDeadline: PAST },
    { attempt: "FAILED", failureCode: "DEADLINE_EXCEEDED", job: "FAILED", next: false, cancel: false },
  ],
  [
    "RUNNING, job deadline 1 ms ago",
    { attempt: "RUNNING", job: "RUNNING", jobDeadline: PAST },
    { attempt: "FAILED", failureCode: "DEADLINE_EXCEEDED", job: "FAILED", next: false, cancel: true },
  ],
  [
    "RUNNING, cancel requested, job deadline 1 ms ago",
    { attempt: "RUNNING", job: "CANCEL_REQUESTED", jobDeadline: PAST },
    { attempt: "FAILED", failureCode: "DEADLINE_EXCEEDED", job: "CANCELLED", next: false, cancel: true },
  ],
  [
    "RUNNING, job deadline an hour ahead",
    { attempt: "RUNNING", job: "RUNNING", jobDeadline: "1 hour" },
    "unchanged",
  ],
  [
    "completion accepted (promotion pending), job deadline 1 ms ago",
    { attempt: "UPLOADING", job: "RUNNING", jobDeadline: PAST, completionAccepted: true },
    "unchanged",
  ],
  [
    "COMPLETED, job deadline an hour ago",
    { attempt: "SUCCEEDED", job: "COMPLETED", jobDeadline: "-1 hour" },
    "unchanged",
  ],
  // Retention of kept uploads.
  [
    "WAITING_FOR_STORAGE, retention ended 1 ms ago",
    { attempt: "WAITING_FOR_STORAGE", job: "WAITING_FOR_STORAGE", pauseExpires: PAST },
    {
      attempt: "FAILED",
      failureCode: "UPLOAD_RETENTION_EXPIRED",
      job: "FAILED",
      next: false,
      cancel: true,
    },
  ],
  [
    "WAITING_FOR_STORAGE, retention ends in an hour",
    { attempt: "WAITING_FOR_STORAGE", job: "WAITING_FOR_STORAGE", pauseExpires: "1 hour" },
    "unchanged",
  ],
];

const expected = (row: Arrangement, outcome: Outcome | "unchanged") =>
  outcome === "unchanged" ? unchanged(row) : outcome;

describe("deadlines the sweeper enforces, two replicas sweeping at once", () => {
  const arranged = new Map<string, { jobId: string; attemptId: string }>();
  let firstPass = 0;

  beforeAll(async () => {
    const worker = await enrolled();
    for (const [what, row] of SWEEP_TABLE) {
      const jobId = await submit();
      arranged.set(what, { jobId, attemptId: await arrange(jobId, worker, row) });
    }
    // Dispatch deadlines again, all in one statement just before the sweep: arranging the
    // rows one by one takes long enough on a busy machine to eat into the margins.
    const ids: string[] = [];
    const intervals: string[] = [];
    for (const [what, row] of SWEEP_TABLE) {
      if (row.dispatchDeadline === undefined) continue;
      ids.push(arranged.get(what)?.attemptId as string);
      intervals.push(row.dispatchDeadline);
    }
    await a.sql`
      update attempts a set dispatch_deadline = now() + v.deadline::interval
      from unnest(${ids}::uuid[], ${intervals}::text[]) as v(id, deadline)
      where a.id = v.id`;
    const sweepers = [a, b, a, b].map((replica) => replica.manager.execution.sweeper);
    firstPass = (await Promise.all(sweepers.map((sweeper) => sweeper.sweep()))).reduce((x, y) => x + y, 0);
  });

  it("fails each past-deadline row once, across both replicas", async () => {
    const due = SWEEP_TABLE.filter(([, , outcome]) => outcome !== "unchanged").length;
    expect(firstPass).toBe(due);
    // A second pass finds nothing more (the 3 s row is still ahead of its deadline).
    const again = await Promise.all([a, b].map((replica) => replica.manager.execution.sweeper.sweep()));
    expect(again).toEqual([0, 0]);
  });

  it.each(SWEEP_TABLE)("%s", async (what, row, outcome) => {
    const { jobId, attemptId } = arranged.get(what) as { jobId: string; attemptId: string };
    check(await observe(jobId, attemptId), attemptId, row, expected(row, outcome));
  });

  it("the row just inside its dispatch deadline fails once the deadline passes, once", async () => {
    const [what, row] = SWEEP_TABLE[0] as (typeof SWEEP_TABLE)[number];
    const { jobId, attemptId } = arranged.get(what) as { jobId: string; attemptId: string };
    const [deadline] = await a.sql<{ dispatchDeadline: Date }[]>`
      select dispatch_deadline from attempts where id = ${attemptId}`;
    let swept = 0;
    await waitFor(
      "the deadline passing",
      async () => {
        const counts = await Promise.all([a, b].map((replica) => replica.manager.execution.sweeper.sweep()));
        swept += counts.reduce((x, y) => x + y, 0);
        return swept > 0;
      },
      10_000,
      50,
    );
    expect(swept).toBe(1);
    expect(Date.now()).toBeGreaterThanOrEqual(
      deadline?.dispatchDeadline.getTime() ?? Number.POSITIVE_INFINITY,
    );
    check(await observe(jobId, attemptId), attemptId, row, {
      attempt: "FAILED",
      failureCode: "DISPATCH_TIMEOUT",
      job: "QUEUED",
      next: true,
      cancel: true,
    });
  });
});

describe("lost Workers: two replicas' monitors at the WORKER_LOST boundary", () => {
  const HEARTBEAT_MS = 100;
  const LOST_AFTER_MS = 1000;
  const T0 = Date.parse("2030-01-01T00:00:00.000Z");
  let clock = T0;
  const monitors: WorkerMonitor[] = [];
  let silent: EnrolledWorker;
  let late: EnrolledWorker;

  /** [what, holder, arrangement, outcome once its Worker is OFFLINE] */
  const LOST_TABLE: [string, "silent" | "late", Arrangement, Outcome | "unchanged"][] = [
    [
      "RUNNING",
      "silent",
      { attempt: "RUNNING", job: "RUNNING" },
      { attempt: "FAILED", failureCode: "WORKER_LOST", job: "QUEUED", next: true, cancel: true },
    ],
    [
      "DISPATCHED (within its dispatch deadline)",
      "silent",
      { attempt: "DISPATCHED", job: "QUEUED", dispatchDeadline: "1 hour" },
      { attempt: "FAILED", failureCode: "WORKER_LOST", job: "QUEUED", next: true, cancel: true },
    ],
    [
      "RUNNING at MAX_ATTEMPTS",
      "silent",
      { attemptNumber: MAX_ATTEMPTS, attempt: "RUNNING", job: "RUNNING" },
      { attempt: "FAILED", failureCode: "WORKER_LOST", job: "FAILED", next: false, cancel: true },
    ],
    [
      "RUNNING, cancel requested",
      "silent",
      { attempt: "RUNNING", job: "CANCEL_REQUESTED" },
      { attempt: "FAILED", failureCode: "WORKER_LOST", job: "CANCELLED", next: false, cancel: true },
    ],
    [
      "completion accepted (the Manager finishes it without the Worker)",
      "silent",
      { attempt: "UPLOADING", job: "RUNNING", completionAccepted: true },
      "unchanged",
    ],
    [
      "WAITING_FOR_STORAGE (its files wait on the Worker's disk)",
      "silent",
      { attempt: "WAITING_FOR_STORAGE", job: "WAITING_FOR_STORAGE", pauseExpires: "1 hour" },
      "unchanged",
    ],
    ["FAILED (terminal)", "silent", { attempt: "FAILED", job: "FAILED" }, "unchanged"],
    [
      "RUNNING on the Worker heard 500 ms later",
      "late",
      { attempt: "RUNNING", job: "RUNNING" },
      { attempt: "FAILED", failureCode: "WORKER_LOST", job: "QUEUED", next: true, cancel: true },
    ],
  ];
  const arranged = new Map<string, { jobId: string; attemptId: string }>();

  const stubBroker: Broker = {
    ping: async () => {},
    connection: () => undefined,
    subscribe: () => ({ unsubscribe() {} }),
    streamReplicas: 1,
    close: async () => {},
  };

  beforeAll(async () => {
    silent = await enrolled();
    late = await enrolled();
    for (const [what, holder, row] of LOST_TABLE) {
      const jobId = await submit();
      arranged.set(what, {
        jobId,
        attemptId: await arrange(jobId, holder === "silent" ? silent : late, row),
      });
    }
    for (const replica of [a, b]) {
      const monitor = new WorkerMonitor({
        sql: replica.sql,
        hooks: replica.manager.execution.hooks,
        broker: stubBroker,
        subjectPrefix: replica.subjectPrefix,
        logger: silentLogger,
        heartbeatIntervalMs: HEARTBEAT_MS,
        lostAfterMs: LOST_AFTER_MS,
        changed: () => {},
        now: () => clock,
      });
      monitors.push(monitor);
      monitor.start();
    }
    // Both loaded the ONLINE Workers, silence counted from T0.
    await waitFor("the monitors loaded", async () =>
      monitors.every((monitor) => monitor.live(silent.workerId) && monitor.live(late.workerId)),
    );
  });

  afterAll(async () => {
    for (const monitor of monitors) await monitor.stop();
  });

  const connectivity = async (worker: EnrolledWorker) =>
    (
      await a.sql<{ connectivity: string }[]>`select connectivity from workers where id = ${worker.workerId}`
    )[0]?.connectivity;

  const transitions = async (worker: EnrolledWorker) =>
    a.sql<{ from: string; to: string }[]>`
      select payload->>'from' as from, payload->>'to' as to from outbox
      where kind = 'worker.updated' and payload->>'workerId' = ${worker.workerId}
        and payload->>'change' = 'connectivity'
      order by id`;

  /** Lets both monitors tick a few times at the current clock. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 8 * 25));

  const heldAttemptsUnchanged = async (holder: "silent" | "late") => {
    for (const [what, who, row] of LOST_TABLE) {
      if (who !== holder) continue;
      const { jobId, attemptId } = arranged.get(what) as { jobId: string; attemptId: string };
      check(await observe(jobId, attemptId), attemptId, row, unchanged(row));
    }
  };

  it("SUSPECTED past two heartbeat intervals keeps the attempts; OFFLINE at exactly WORKER_LOST_AFTER_MS fails them once", async () => {
    // The late Worker is heard at T0 + 500 ms by both replicas.
    clock = T0 + 500;
    const data = encodeMessage(HeartbeatSchema, {
      protocolVersion: PROTOCOL_VERSION,
      workerId: late.workerId,
      instanceId: late.instanceId,
      sentAt: new Date(clock).toISOString(),
      activeAttempts: [],
      freeCapacity: 4,
    });
    for (const monitor of monitors)
      monitor.receive(subjects.workerHeartbeat(a.subjectPrefix, late.workerId), data);

    // 1 ms inside the silent Worker's lost deadline: SUSPECTED, nothing lost.
    clock = T0 + LOST_AFTER_MS - 1;
    await waitFor(
      "both SUSPECTED",
      async () => (await connectivity(silent)) === "SUSPECTED" && (await connectivity(late)) === "SUSPECTED",
    );
    await settle();
    expect(await connectivity(silent)).toBe("SUSPECTED");
    await heldAttemptsUnchanged("silent");
    await heldAttemptsUnchanged("late");

    // At the deadline: OFFLINE, recorded once by one of the two replicas.
    clock = T0 + LOST_AFTER_MS;
    await waitFor(
      "the silent Worker OFFLINE",
      async () => (await connectivity(silent)) === "OFFLINE",
      5000,
      20,
    );
    await settle();
    expect(await transitions(silent)).toEqual([
      { from: "ONLINE", to: "SUSPECTED" },
      { from: "SUSPECTED", to: "OFFLINE" },
    ]);
    for (const [what, holder, row, outcome] of LOST_TABLE) {
      if (holder !== "silent") continue;
      const { jobId, attemptId } = arranged.get(what) as { jobId: string; attemptId: string };
      check(await observe(jobId, attemptId), attemptId, row, expected(row, outcome));
    }
    // The late Worker is 500 ms inside its own deadline.
    expect(await connectivity(late)).toBe("SUSPECTED");
    await heldAttemptsUnchanged("late");

    clock = T0 + 500 + LOST_AFTER_MS - 1;
    await settle();
    expect(await connectivity(late)).toBe("SUSPECTED");
    await heldAttemptsUnchanged("late");

    clock = T0 + 500 + LOST_AFTER_MS;
    await waitFor("the late Worker OFFLINE", async () => (await connectivity(late)) === "OFFLINE", 5000, 20);
    await settle();
    expect(await transitions(late)).toEqual([
      { from: "ONLINE", to: "SUSPECTED" },
      { from: "SUSPECTED", to: "OFFLINE" },
    ]);
    for (const [what, holder, row, outcome] of LOST_TABLE) {
      if (holder !== "late") continue;
      const { jobId, attemptId } = arranged.get(what) as { jobId: string; attemptId: string };
      check(await observe(jobId, attemptId), attemptId, row, expected(row, outcome));
    }
  });
});
