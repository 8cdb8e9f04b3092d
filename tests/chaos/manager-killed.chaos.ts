/**
 * A Manager killed mid-dispatch: each run builds a queue while the agents are idle and out of
 * reach (SIGSTOPped until the Manager no longer counts them ONLINE), lets them back, and
 * SIGKILLs the Manager (manager-process-faults.ts) once its dispatcher has begun handing the
 * queue out, after a seeded delay skewed towards zero: leases committed but not yet published,
 * published but not accepted, accepted while their reports wait, the next wave being
 * scheduled. The Manager is started again on its port. Every job must complete exactly once,
 * and no lease may run twice (the agents' logs: the checker's facts).
 *
 * Recovery times: from the restart to the Manager answering ready ("Manager back and
 * serving"), and to the last row the killed relay left unpublished being published ("relay
 * caught up").
 */
import { describe, expect, it } from "vitest";
import type { Sql } from "../../manager/src/platform/db.ts";
import { Freezer } from "../harness/media-jobs.ts";
import { startManagerRig } from "./manager-process-faults.ts";
import { chaosRuns, pause, reportScenario, type SubmittedJob, seededRandom } from "./scenario.ts";

const SCENARIO = "manager-killed-mid-dispatch";
const RUNS = chaosRuns({ full: 10, ci: 2 });
/** Six slots: each agent takes one lease at a time on this 2-core machine. */
const AGENTS = 6;
/** Three waves of leases: the first in one scheduling pass, the others as slots free up. */
const JOBS_PER_RUN = 3 * AGENTS;
const SUBMITTERS = 8;
/**
 * The kill falls up to this long after the first lease of the run is logged, skewed towards
 * zero (the square of a uniform draw): the first wave's publishing and acceptance take tens of
 * milliseconds, the later waves come seconds apart.
 */
const KILL_WINDOW_MS = 4000;

describe("a Manager killed mid-dispatch", () => {
  it(`completes every job once and runs no lease twice over ${RUNS} kills`, async () => {
    const random = seededRandom(SCENARIO);
    const started = Date.now();
    const freezer = new Freezer();
    const rig = await startManagerRig({ scenario: SCENARIO, agents: AGENTS });
    try {
      const pids = rig.agents.map((agent) => agent.child.pid as number);
      const jobs: SubmittedJob[] = [];
      const backMs: number[] = [];
      const caughtUpMs: number[] = [];
      const atKill: string[] = [];
      for (let run = 0; run < RUNS; run++) {
        freezer.freeze(...pids);
        await rig.untilNoWorkerOnline(30_000);
        const queued: SubmittedJob[] = [];
        await Promise.all(
          Array.from({ length: SUBMITTERS }, async (_, submitter) => {
            for (let index = submitter; index < JOBS_PER_RUN; index += SUBMITTERS) {
              const job = await rig.submit(`${run}/${index}`);
              if (!job) throw new Error(`run ${run}: submission ${index} was not acknowledged`);
              queued.push(job);
            }
          }),
        );
        jobs.push(...queued);
        const logSeen = rig.manager().output().length;
        freezer.thaw(...pids);
        await rig.untilManagerLogs("lease dispatched", logSeen, 60_000);
        const delayMs = Math.floor(random.next() ** 2 * KILL_WINDOW_MS);
        await pause(delayMs);
        await rig.kill();
        const left = await rig.outboxLeft();
        atKill.push(
          `${delayMs} ms after the first lease: ${left.unpublished} outbox rows unpublished, attempts ${await attemptStates(rig.sql, queued)}`,
        );
        const restartedAt = Date.now();
        backMs.push(await rig.restart());
        await rig.untilPublishedThrough(left.lastId, 60_000);
        caughtUpMs.push(Date.now() - restartedAt);
        const open = await rig.untilTerminal(queued, 120_000);
        if (open > 0) break;
      }

      await rig.untilTerminal(jobs, 60_000);
      const audit = await rig.auditOutbox(jobs);
      await reportScenario(
        {
          scenario: SCENARIO,
          runs: backMs.length,
          seed: random.seed,
          durationMs: Date.now() - started,
          recoveries: [
            { what: "Manager back and serving", samplesMs: backMs },
            { what: "relay caught up", samplesMs: caughtUpMs },
          ],
          notes: [
            `${AGENTS} agents (one lease each), ${JOBS_PER_RUN} jobs queued per run; attempts in all: ${await attemptCount(rig.sql, jobs)} for ${jobs.length} jobs`,
            ...atKill.map((state, run) => `kill ${run + 1}: ${state}`),
            `streams ${audit.streamMessages} messages for ${audit.outboxRows} outbox rows, ${audit.duplicateMessages} duplicate`,
            ...rig.rewrites(jobs),
          ],
        },
        await rig.facts(jobs),
      );
      expect(audit).toMatchObject({ duplicateMessages: 0, missingMessages: 0, strayMessages: 0 });
    } finally {
      freezer.thawAll();
      await rig.close();
    }
  });
});

/** The attempts of `jobs` by state, e.g. "DISPATCHED 12, CREATED 12". */
async function attemptStates(sql: Sql, jobs: SubmittedJob[]): Promise<string> {
  const rows = await sql<{ state: string; count: number }[]>`
    select state, count(*)::int as count from attempts
    where job_id = any(${jobs.map((job) => job.jobId)}::uuid[]) group by state order by state`;
  return rows.map((row) => `${row.state} ${row.count}`).join(", ");
}

async function attemptCount(sql: Sql, jobs: SubmittedJob[]): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from attempts where job_id = any(${jobs.map((job) => job.jobId)}::uuid[])`;
  return row?.count ?? 0;
}
