/**
 * The outbox relay killed under 32 writers: the relay runs inside the Manager process, so
 * each run SIGKILLs the Manager (manager-process-faults.ts) while 32 clients submit jobs
 * against it, a few seconds into their stream and preferably while the outbox holds committed
 * rows the relay has not yet published, and starts it again on its port; the writers
 * keep going through the outage (their requests refused) until the restarted relay has
 * published what the killed one left. Every acknowledged job must complete once, and every
 * committed outbox row must reach its stream exactly once (the audit of the events and
 * commands streams against the outbox, by Nats-Msg-Id).
 *
 * Recovery times: from the restart to the Manager answering ready ("Manager back and
 * serving"), and to the last row the killed relay left unpublished being published ("relay
 * caught up").
 */
import { describe, expect, it } from "vitest";
import { startManagerRig } from "./manager-process-faults.ts";
import { chaosRuns, pause, reportScenario, type SubmittedJob, seededRandom } from "./scenario.ts";

const SCENARIO = "relay-killed";
const RUNS = chaosRuns({ full: 10, ci: 2 });
const WRITERS = 32;
/**
 * Each writer waits 1-3 s between its submissions: about 15 jobs a second from the 32, some
 * 40 acknowledged per run, which three agents (real ffmpeg on a shared 2-core machine, about
 * a job a second when the suite runs) finish in the time the suite allows.
 */
const WRITER_PAUSE_MS = [1000, 3000] as const;
/** The kill falls this far into the writers' stream... */
const KILL_AFTER_MS = [1500, 3000] as const;
/** ...at the first moment within this one that the outbox holds a row not yet published. */
const UNPUBLISHED_WAIT_MS = 2000;

describe("the outbox relay killed under 32 concurrent writers", () => {
  it(`publishes every committed row once and loses no acknowledged job over ${RUNS} kills`, async () => {
    const random = seededRandom(SCENARIO);
    const between = ([low, high]: readonly [number, number], draw = random.next()) =>
      low + Math.floor(draw * (high - low));
    const started = Date.now();
    const rig = await startManagerRig({ scenario: SCENARIO, agents: 3 });
    try {
      const jobs: SubmittedJob[] = [];
      const backMs: number[] = [];
      const caughtUpMs: number[] = [];
      const inFlightAtKill: number[] = [];
      const leftByKill: number[] = [];
      let unanswered = 0;
      let refused = 0;
      for (let run = 0; run < RUNS; run++) {
        let writing = true;
        let inFlight = 0;
        const writer = async (writerIndex: number) => {
          for (let submission = 0; writing; submission++) {
            inFlight++;
            try {
              const job = await rig.submit(`${run}/${writerIndex}-${submission}`);
              if (job) jobs.push(job);
              else refused++;
            } catch {
              // Cut by the kill or refused while the Manager is down: not acknowledged, not checked.
              unanswered++;
            } finally {
              inFlight--;
            }
            // Not from the seed: the writers' interleaving is not repeatable, the kills' timing is.
            await pause(between(WRITER_PAUSE_MS, Math.random()));
          }
        };
        const writers = Array.from({ length: WRITERS }, (_, writerIndex) => writer(writerIndex));
        await pause(between(KILL_AFTER_MS));
        // Struck while the relay has committed rows in hand, when the next few ms offer that.
        await rig.untilUnpublished(UNPUBLISHED_WAIT_MS);
        inFlightAtKill.push(inFlight);
        await rig.kill();
        const left = await rig.outboxLeft();
        leftByKill.push(left.unpublished);
        const restartedAt = Date.now();
        backMs.push(await rig.restart());
        await rig.untilPublishedThrough(left.lastId, 60_000);
        caughtUpMs.push(Date.now() - restartedAt);
        writing = false;
        await Promise.all(writers);
      }

      const open = await rig.untilTerminal(jobs, 180_000 + jobs.length * 1_500);
      if (open === 0) await rig.untilOutboxPublished(60_000);
      const audit = await rig.auditOutbox(jobs);
      await reportScenario(
        {
          scenario: SCENARIO,
          runs: RUNS,
          seed: random.seed,
          durationMs: Date.now() - started,
          recoveries: [
            { what: "Manager back and serving", samplesMs: backMs },
            { what: "relay caught up", samplesMs: caughtUpMs },
          ],
          notes: [
            `${WRITERS} writers: ${jobs.length} submissions acknowledged, ${refused} answered otherwise, ${unanswered} unanswered (cut or refused while down)`,
            `requests in flight at each kill: ${inFlightAtKill.join(", ")}`,
            `outbox rows each kill left unpublished: ${leftByKill.join(", ")}`,
            `outbox ${audit.outboxRows} rows (${audit.unpublishedRows} unpublished); streams ${audit.streamMessages} messages, ` +
              `${audit.duplicateMessages} duplicate, ${audit.missingMessages} missing, ${audit.strayMessages} stray`,
            ...rig.rewrites(jobs),
          ],
        },
        await rig.facts(jobs),
      );
      expect(audit).toMatchObject({
        unpublishedRows: 0,
        duplicateMessages: 0,
        missingMessages: 0,
        strayMessages: 0,
        streamMessages: audit.outboxRows,
        jobsWithoutCreated: [],
        jobsWithoutCompleted: [],
      });
    } finally {
      await rig.close();
    }
  });
});
