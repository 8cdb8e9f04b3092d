/**
 * Two Manager replicas on one schema and one subject prefix, driven by protocol-level
 * Workers: every queued job is leased exactly once (the scheduler's advisory lock and SKIP
 * LOCKED leave nothing behind and hand nothing out twice), and two replicas sweeping the same
 * dispatch timeouts at once fail each attempt once and queue exactly one next attempt for it.
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import type { LeaseCommand } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";

const WORKERS = 4;
const CAPACITY = 128;
const JOBS = 200;
const TIMED_OUT = 300;
const MAX_ATTEMPTS = 3;

let a: TestManager;
let b: TestManager;
let projectId: string;
const workers: ProtocolWorker[] = [];

/** Jobs whose leases the Workers answer; the rest are left unanswered. */
const answered = new Set<string>();
/** Attempts whose lease was answered with `accepted`. */
const accepted = new Set<string>();
let responding = true;
let responder: Promise<void> | undefined;

beforeAll(async () => {
  const settings = {
    heartbeatIntervalMs: 500,
    // Nothing in this file should be lost or time out unless the test makes it.
    lostAfterMs: 20_000,
    dispatchTimeoutMs: 120_000,
    maxAttempts: MAX_ATTEMPTS,
  };
  a = await TestManager.start(settings);
  b = await TestManager.start({ ...settings, schema: a.schema });
  ({ projectId } = await a.createProject());
  for (let index = 0; index < WORKERS; index++) {
    workers.push(
      await ProtocolWorker.start(index % 2 === 0 ? a : b, {
        heartbeatMs: 200,
        overrides: {
          capacityCap: null,
          probe: {
            ffmpegVersion: "5.1.9",
            capabilities: ["libx264", "aac"],
            hardwareEncoders: [],
            certification: { status: "READY", reasons: [] },
            capacity: CAPACITY,
          },
        },
      }),
    );
  }
  responder = respond();
});

afterAll(async () => {
  responding = false;
  await responder;
  for (const worker of workers) await worker.stop();
  // The replica first, keeping the streams: the other one still runs on them.
  await b?.close({ keepStreams: true });
  await a?.close();
});

/** Answers every lease of an answerable job with `accepted`, as soon as it arrives. */
async function respond(): Promise<void> {
  while (responding) {
    for (const worker of workers) {
      for (const lease of worker.leases()) {
        if (!answered.has(lease.jobId) || accepted.has(lease.attemptId)) continue;
        accepted.add(lease.attemptId);
        await worker.report("accepted", lease);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Submits `count` jobs, alternating between the replicas, a few requests at a time. */
async function submitMany(count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const submitter = async () => {
    while (next < count) {
      const index = next++;
      const replica = index % 2 === 0 ? a : b;
      ids.push(await replica.submitJob(sampleSubmission(projectId)));
    }
  };
  await Promise.all(Array.from({ length: 8 }, submitter));
  return ids;
}

function allLeases(): { worker: ProtocolWorker; lease: LeaseCommand }[] {
  return workers.flatMap((worker) => worker.leases().map((lease) => ({ worker, lease })));
}

interface AttemptRow {
  id: string;
  jobId: string;
  attemptNumber: number;
  state: string;
  fencingToken: string;
  workerId: string | null;
  dispatchedAt: Date | null;
  acceptedAt: Date | null;
  failureCode: string | null;
}

async function attemptsOf(jobIds: readonly string[]): Promise<Map<string, AttemptRow[]>> {
  const rows = await a.sql<AttemptRow[]>`
    select id, job_id, attempt_number, state, fencing_token, worker_id, dispatched_at, accepted_at, failure_code
    from attempts where job_id = any(${jobIds as string[]}::uuid[]) order by job_id, attempt_number`;
  const byJob = new Map<string, AttemptRow[]>(jobIds.map((id) => [id, []]));
  for (const row of rows) byJob.get(row.jobId)?.push(row);
  return byJob;
}

/** How many of the jobs' first attempts were dispatched (whatever happened after). */
async function leased(jobIds: readonly string[]): Promise<number> {
  const [row] = await a.sql<{ count: number }[]>`
    select count(*)::int as count from attempts
    where job_id = any(${jobIds as string[]}::uuid[]) and attempt_number = 1 and dispatched_at is not null`;
  return row?.count ?? 0;
}

async function jobStates(jobIds: readonly string[]): Promise<Record<string, number>> {
  const rows = await a.sql<{ state: string; count: number }[]>`
    select state, count(*)::int as count from jobs where id = any(${jobIds as string[]}::uuid[]) group by state`;
  return Object.fromEntries(rows.map((row) => [row.state, row.count]));
}

const execution = (manager: TestManager) => manager.manager.execution;

describe("two Manager replicas on one schema", () => {
  let jobs: string[] = [];

  it(`lease each of ${JOBS} jobs exactly once, to Workers with room, and leave none queued`, async () => {
    const started = Date.now();
    // Half through both replicas' own scheduling loops, woken by the submits and their ticks.
    jobs = await submitMany(JOBS / 2);
    for (const jobId of jobs) answered.add(jobId);
    await waitFor(
      "the loops to lease every job",
      async () => (await leased(jobs)) === jobs.length,
      30_000,
      50,
    );
    // The other half by scheduling passes both replicas run at the same time, in turns of who
    // starts first: left to the loops, whichever replica is busy takes nearly everything (the
    // other's try of the advisory lock fails and it waits for its next tick).
    await execution(a).dispatcher.stop();
    await execution(b).dispatcher.stop();
    const raced = await submitMany(JOBS / 2);
    for (const jobId of raced) answered.add(jobId);
    const racedBy = { a: 0, b: 0 };
    for (let round = 0; ; round++) {
      const order = round % 2 === 0 ? [a, b, a, b] : [b, a, b, a];
      const results = await Promise.all(
        order.map((replica) => execution(replica).dispatcher.scheduleOnce(7)),
      );
      results.forEach((result, index) => {
        racedBy[order[index] === a ? "a" : "b"] += result.dispatched;
      });
      if (results.every((result) => result.dispatched === 0)) break;
    }
    execution(a).dispatcher.start();
    execution(b).dispatcher.start();
    jobs = [...jobs, ...raced];
    expect(racedBy.a + racedBy.b).toBe(JOBS / 2);
    // Both replicas took turns (each round's two starters alternate).
    expect(racedBy.a).toBeGreaterThan(0);
    expect(racedBy.b).toBeGreaterThan(0);
    await waitFor(
      `all ${JOBS} jobs RUNNING`,
      async () => (await jobStates(jobs)).RUNNING === JOBS,
      30_000,
      50,
    );
    const elapsed = Date.now() - started;

    // One lease command per attempt across all Workers, and one attempt per job.
    const leases = allLeases().filter(({ lease }) => jobs.includes(lease.jobId));
    expect(leases).toHaveLength(JOBS);
    expect(new Set(leases.map(({ lease }) => lease.attemptId)).size).toBe(JOBS);
    expect(new Set(leases.map(({ lease }) => lease.jobId)).size).toBe(JOBS);
    const byJob = await attemptsOf(jobs);
    for (const { worker, lease } of leases) {
      const attempts = byJob.get(lease.jobId) ?? [];
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({
        id: lease.attemptId,
        attemptNumber: 1,
        state: "RUNNING",
        fencingToken: lease.fencingToken,
        workerId: worker.workerId,
      });
      expect(attempts[0]?.dispatchedAt).not.toBeNull();
      expect(attempts[0]?.acceptedAt).not.toBeNull();
    }
    // No Worker got more than it has room for.
    for (const worker of workers) {
      expect(leases.filter((entry) => entry.worker === worker).length).toBeLessThanOrEqual(CAPACITY);
    }
    // Every lease the replicas committed is one of these.
    expect(execution(a).dispatcher.counters.leases + execution(b).dispatcher.counters.leases).toBe(JOBS);
    console.info(
      `[replicas] ${JOBS} jobs leased in ${elapsed} ms; replica A ${execution(a).dispatcher.counters.leases}, replica B ${execution(b).dispatcher.counters.leases} leases (raced: A ${racedBy.a}, B ${racedBy.b}); per Worker ${workers.map((w) => leases.filter((l) => l.worker === w).length).join("/")}`,
    );

    // Half the Workers' attempts fail, the rest keep running: nothing is leased again.
    const failing = leases.filter((_, index) => index % 2 === 0);
    for (const { worker, lease } of failing) {
      await worker.report("failed", lease, {
        failureCode: "ENCODE_FAILED",
        failureMessage: "ffmpeg exited 1",
      });
    }
    await waitFor(
      "half the jobs FAILED",
      async () => {
        const states = await jobStates(jobs);
        return states.FAILED === failing.length && states.RUNNING === JOBS - failing.length;
      },
      20_000,
      50,
    );
    for (const replica of [a, b, a, b]) {
      expect(await execution(replica).dispatcher.scheduleOnce(100)).toMatchObject({ dispatched: 0 });
    }
    const after = await attemptsOf(jobs);
    for (const { lease } of failing) {
      expect(after.get(lease.jobId)?.map((row) => [row.state, row.failureCode])).toEqual([
        ["FAILED", "ENCODE_FAILED"],
      ]);
    }
    expect(allLeases().filter(({ lease }) => jobs.includes(lease.jobId))).toHaveLength(JOBS);
  }, 60_000);

  it(`sweeping ${TIMED_OUT} dispatch timeouts on both replicas at once fails each once, with one next attempt`, async () => {
    // Leased to Workers that never answer.
    const silent = await submitMany(TIMED_OUT);
    await waitFor(
      `all ${TIMED_OUT} leases dispatched`,
      async () => {
        const [row] = await a.sql<{ count: number }[]>`
          select count(*)::int as count from attempts
          where job_id = any(${silent}::uuid[]) and state = 'DISPATCHED'`;
        return row?.count === TIMED_OUT;
      },
      40_000,
      50,
    );
    const first = await attemptsOf(silent);
    // The replicas' own once-a-second sweeps stop: only the concurrent passes below run.
    await execution(a).sweeper.stop();
    await execution(b).sweeper.stop();
    await a.sql`
      update attempts set dispatch_deadline = now() - interval '1 millisecond'
      where job_id = any(${silent}::uuid[]) and state = 'DISPATCHED'`;

    // Three batches (100 each) at least, and each replica runs two passes per round: both
    // replicas sweep, several passes at once, until a round finds nothing.
    let swept = 0;
    let rounds = 0;
    for (;;) {
      const counts = await Promise.all([
        execution(a).sweeper.sweep(),
        execution(b).sweeper.sweep(),
        execution(a).sweeper.sweep(),
        execution(b).sweeper.sweep(),
      ]);
      rounds++;
      const total = counts.reduce((sum, count) => sum + count, 0);
      swept += total;
      if (total === 0) break;
    }
    expect(swept).toBe(TIMED_OUT);
    expect(
      execution(a).sweeper.counters.dispatchTimeouts + execution(b).sweeper.counters.dispatchTimeouts,
    ).toBe(TIMED_OUT);
    console.info(
      `[replicas] ${TIMED_OUT} dispatch timeouts swept in ${rounds} rounds; replica A ${execution(a).sweeper.counters.dispatchTimeouts}, replica B ${execution(b).sweeper.counters.dispatchTimeouts}`,
    );

    const after = await attemptsOf(silent);
    const rows = await a.sql<{ id: string; currentAttemptId: string; state: string }[]>`
      select id, current_attempt_id, state from jobs where id = any(${silent}::uuid[])`;
    const current = new Map(rows.map((row) => [row.id, row]));
    for (const jobId of silent) {
      const attempts = after.get(jobId) ?? [];
      const before = first.get(jobId)?.[0];
      expect(attempts.map((row) => row.attemptNumber)).toEqual([1, 2]);
      expect(attempts[0]).toMatchObject({ id: before?.id, state: "FAILED", failureCode: "DISPATCH_TIMEOUT" });
      expect(["CREATED", "DISPATCHED"]).toContain(attempts[1]?.state);
      expect(Number(attempts[1]?.fencingToken)).toBeGreaterThan(Number(attempts[0]?.fencingToken));
      expect(current.get(jobId)).toMatchObject({ state: "QUEUED", currentAttemptId: attempts[1]?.id });
    }
    // Each timed-out lease is withdrawn from its Worker exactly once.
    const cancels = await a.sql<{ attemptId: string; count: number }[]>`
      select payload->>'attemptId' as attempt_id, count(*)::int as count from outbox
      where kind = 'worker.command' and payload->>'type' = 'cancel'
        and payload->>'attemptId' = any(${[...first.values()].map((rows) => rows[0]?.id ?? "")})
      group by 1`;
    expect(cancels).toHaveLength(TIMED_OUT);
    expect(cancels.every((row) => row.count === 1)).toBe(true);
  }, 60_000);
});
