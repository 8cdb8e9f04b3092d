/**
 * PostgreSQL stopped under running work: the Manager as operators run it (`npm run manager`, on
 * a private PostgreSQL, NATS and s3rver behind the request log), three real agents. Each run
 * submits jobs, and once some are running and others still queued, PostgreSQL is stopped for
 * three times the longest a request waits on it, then started again.
 *
 * While it is down the API is probed without pause: liveness answers 200, readiness 503 naming
 * the database, a job submission and a job read 500 with the error body (the SPEC's "unexpected
 * persistence or dependency failure"), every one within a bound (nothing hangs). A client
 * submitting the whole time, from just before the stop until readiness is back, keeps what
 * was acknowledged: a 201 is a job the checker judges, a 500 is not.
 *
 * Recovery, each from the moment PostgreSQL accepts connections again: readiness 200; the
 * queue drained (every job queued when PostgreSQL stopped dispatched); every job of the run
 * COMPLETED.
 */

import { join } from "node:path";
import { type AgentProcess, agentDirs, killAgents, startAgent } from "@tjm/devstack/agent-process";
import { type ManagerProcess, startManagerProcess } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET, TestIssuer } from "@tjm/devstack/oidc-issuer";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import {
  type NatsServer,
  type PrivatePostgres,
  startNatsServer,
  startPrivatePostgres,
  waitFor,
} from "@tjm/devstack/services";
import { describe, expect, it } from "vitest";
import { PING_TIMEOUT_MS } from "../../manager/src/health/ready.ts";
import { createProject } from "../../manager/src/projects/store.ts";
import { createTestSchema } from "../harness/manager.ts";
import { putClip, tinyPlan } from "../harness/media-jobs.ts";
import { type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";
import {
  chaosRuns,
  collectFacts,
  pause,
  reportScenario,
  type SubmittedJob,
  seededRandom,
} from "./scenario.ts";

const SCENARIO = "postgres-stopped";
const RUNS = chaosRuns({ full: 10, ci: 2 });
const AGENTS = 3;
/** Three agents of capacity 1: three waves of tiny jobs, so some are queued at the stop. */
const JOBS_PER_RUN = 9;
/**
 * The Manager has no request-timeout setting (manager/src/config.ts). What bounds a request's
 * wait on PostgreSQL is the pool's connect timeout, 5 s (platform/db.ts), longer than the
 * readiness ping's 3 s (the SPEC's 503): the outage is three times the longer.
 */
const DATABASE_WAIT_MS = Math.max(5000, PING_TIMEOUT_MS);
const OUTAGE_MS = 3 * DATABASE_WAIT_MS;
/**
 * An answer slower than this counts as a hang. With PostgreSQL down a query fails as soon as
 * its connection is refused; the bound leaves room for a machine busy with ffmpeg.
 */
const ANSWER_BOUND_MS = 2 * DATABASE_WAIT_MS;
const TERMINAL_STATES = ["COMPLETED", "FAILED", "CANCELLED"];
/** A run's jobs are tiny; the budget covers a busy machine and a retried dispatch. */
const RUN_BUDGET_MS = 180_000;

/** What a request is; "enroll" only asks for enrollment tokens, before any outage. */
type Probe = "live" | "ready" | "submit" | "read" | "enroll";

interface Answer {
  probe: Probe;
  sentAt: number;
  answeredAt: number;
  status?: number;
  requestId?: string | null;
  body?: unknown;
  /** No HTTP answer: the connection dropped, or the bound passed. */
  failure?: string;
}

/** What the SPEC has the API answer while PostgreSQL is down; undefined when `answer` is that. */
function outageViolation(answer: Answer): string | undefined {
  if (answer.failure !== undefined) return `no answer: ${answer.failure}`;
  const body = answer.body as Record<string, unknown> | undefined;
  switch (answer.probe) {
    case "live":
      return answer.status === 200 ? undefined : `liveness ${answer.status}`;
    case "ready": {
      const database = (body?.error as Record<string, { status?: string }> | undefined)?.database;
      return answer.status === 503 && body?.status === "error" && database?.status === "down"
        ? undefined
        : `readiness ${answer.status} ${JSON.stringify(body)}`;
    }
    default: {
      const expected = {
        statusCode: 500,
        error: "Internal Server Error",
        message: `Internal error (request id ${answer.requestId})`,
        code: "internal.error",
        requestId: answer.requestId,
      };
      return answer.status === 500 && JSON.stringify(body) === JSON.stringify(expected)
        ? undefined
        : `${answer.probe} ${answer.status} ${JSON.stringify(body)}`;
    }
  }
}

describe("PostgreSQL stopped while jobs are queued and running", () => {
  it(`answers as the SPEC says while it is down and loses nothing over ${RUNS} outages`, async () => {
    const random = seededRandom(SCENARIO);
    const started = Date.now();
    let postgres: PrivatePostgres | undefined;
    let nats: NatsServer | undefined;
    let issuer: TestIssuer | undefined;
    let s3: S3Server | undefined;
    let store: S3RequestLog | undefined;
    let schema: Awaited<ReturnType<typeof createTestSchema>> | undefined;
    let manager: ManagerProcess | undefined;
    const scratch = await agentDirs();
    const agents: AgentProcess[] = [];
    try {
      [postgres, nats, issuer, s3] = await Promise.all([
        startPrivatePostgres(),
        startNatsServer(),
        TestIssuer.start(),
        startS3({ buckets: ["media-in", "media-out"] }),
      ]);
      const database = postgres;
      store = await startS3RequestLog(s3.port);
      const log = store;
      schema = await createTestSchema(database.url);
      const sql = schema.sql;
      const { projectId } = await createProject(sql, "acme", SCENARIO);
      await putClip(s3, { bucket: "media-in", key: "tiny.mp4" }, 1, "160x120");
      const running = await startManagerProcess("node", {
        DATABASE_URL: database.url,
        DATABASE_SCHEMA: schema.schema,
        NATS_URL: nats.url,
        NATS_AUTH: "none",
        NATS_SUBJECT_PREFIX: schema.schema,
        // Tokens of the harness's issuer, trusted as an external operator issuer.
        PROVIDER_ENABLED: "false",
        OIDC_ISSUER_URL: "http://127.0.0.1:1/oidc",
        OIDC_OPERATOR_ISSUER_URL: issuer.issuer,
        OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
        ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
        // Every promotion passes the request log.
        S3_ENDPOINT: log.endpoint,
        S3_ACCESS_KEY_ID: s3.settings.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.settings.secretAccessKey,
        LOG_LEVEL: "warn",
      });
      manager = running;
      // Valid for the whole scenario: a full run takes minutes, not an hour.
      const token = await issuer.token({ expiresInSeconds: 3600 });

      const call = async (probe: Probe, path: string, init: RequestInit = {}): Promise<Answer> => {
        const sentAt = Date.now();
        try {
          const response = await fetch(`${running.baseUrl}${path}`, {
            ...init,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            signal: AbortSignal.timeout(ANSWER_BOUND_MS),
          });
          const body: unknown = await response.json();
          const requestId = response.headers.get("x-request-id");
          return { probe, sentAt, answeredAt: Date.now(), status: response.status, requestId, body };
        } catch (err) {
          return { probe, sentAt, answeredAt: Date.now(), failure: String(err) };
        }
      };

      const jobs: SubmittedJob[] = [];
      let submissions = 0;
      /** Submits a tiny job; a 201 joins the jobs the checker judges. */
      const submit = async (): Promise<Answer> => {
        const { executionPlan, destinations } = tinyPlan(`/media-out/${SCENARIO}/${submissions++}`);
        const answer = await call("submit", "/api/v1/operations/jobs", {
          method: "POST",
          body: JSON.stringify({ projectId, executionPlan }),
        });
        if (answer.status === 201) {
          jobs.push({
            jobId: (answer.body as { id: string }).id,
            destinations,
          });
        }
        return answer;
      };

      for (let slot = 1; slot <= AGENTS; slot++) {
        const enrollment = await call("enroll", "/api/v1/operations/enrollment-tokens", {
          method: "POST",
          body: "{}",
        });
        if (enrollment.status !== 201) throw new Error(`enrollment token: ${JSON.stringify(enrollment)}`);
        const name = `${SCENARIO}-${slot}`;
        agents.push(
          startAgent({
            MANAGER_URL: running.baseUrl,
            ENROLLMENT_TOKEN: (enrollment.body as { token: string }).token,
            WORKER_STATE_DIR: join(scratch.root, `state-${name}`),
            WORKER_WORK_DIR: join(scratch.root, `work-${name}`),
            WORKER_NAME: name,
            WORKER_CAPACITY: "1",
            LOG_LEVEL: "info",
          }),
        );
      }
      await Promise.all(agents.map((agent) => agent.waitForMessage("worker started", 60_000)));
      const setupMs = Date.now() - started;

      /** The test's own pool reconnects after an outage; a query failing meanwhile is retried by the waits. */
      const jobStates = async (jobIds: string[]) =>
        sql<{ id: string; state: string; dispatched: boolean }[]>`
          select j.id, j.state, a.dispatched_at is not null as dispatched
          from jobs j join attempts a on a.id = j.current_attempt_id
          where j.id = any(${jobIds}::uuid[])`;

      const duringOutages: Answer[] = [];
      const aroundOutages: Answer[] = [];
      const readinessSamples: number[] = [];
      const firstDispatchSamples: number[] = [];
      const drainSamples: number[] = [];
      const completedSamples: number[] = [];
      const atStops: string[] = [];

      for (let run = 0; run < RUNS; run++) {
        const firstOfRun = jobs.length;
        for (let index = 0; index < JOBS_PER_RUN; index++) {
          const answer = await submit();
          if (answer.status !== 201)
            throw new Error(`submission with PostgreSQL up: ${JSON.stringify(answer)}`);
        }
        const runJobIds = () => jobs.slice(firstOfRun).map((job) => job.jobId);
        const readJobId = runJobIds()[0] as string;

        await waitFor(
          `run ${run + 1}: a job RUNNING`,
          async () => (await jobStates(runJobIds()).catch(() => [])).some((row) => row.state === "RUNNING"),
          RUN_BUDGET_MS,
          100,
        );
        await pause(Math.floor(random.next() * 1000));
        const atStop = await jobStates(runJobIds());
        const queuedAtStop = atStop
          .filter((row) => row.state === "QUEUED" && !row.dispatched)
          .map((row) => row.id);
        atStops.push(
          `${atStop.filter((row) => row.state === "RUNNING").length} running/${queuedAtStop.length} queued`,
        );

        // A client submitting through the outage: before the stop until readiness is back.
        let edgeClientOn = true;
        const edgeClient = (async () => {
          while (edgeClientOn) {
            aroundOutages.push(await submit());
            await pause(200);
          }
        })();

        await database.stop();
        const downAt = Date.now();
        while (Date.now() < downAt + OUTAGE_MS) {
          duringOutages.push(
            ...(await Promise.all([
              call("live", "/api/health/live"),
              call("ready", "/api/health/ready"),
              submit(),
              call("read", `/api/v1/operations/jobs/${readJobId}`),
            ])),
          );
          await pause(250);
        }
        await database.start();
        const upAt = Date.now();

        const readiness = waitFor(
          `run ${run + 1}: readiness 200 after PostgreSQL returned`,
          async () => (await call("ready", "/api/health/ready")).status === 200,
          60_000,
          100,
        ).then(() => {
          readinessSamples.push(Date.now() - upAt);
          edgeClientOn = false;
        });
        let dispatchingAgain = queuedAtStop.length === 0;
        const drained = waitFor(
          `run ${run + 1}: every job queued at the stop dispatched`,
          async () => {
            const rows = await sql<{ pending: number }[]>`
              select count(*)::int as pending from unnest(${queuedAtStop}::uuid[]) as queued(id)
              where not exists (
                select 1 from attempts a where a.job_id = queued.id and a.dispatched_at is not null)`.catch(
              () => [],
            );
            const pending = rows[0]?.pending;
            if (!dispatchingAgain && pending !== undefined && pending < queuedAtStop.length) {
              dispatchingAgain = true;
              firstDispatchSamples.push(Date.now() - upAt);
            }
            return pending === 0;
          },
          RUN_BUDGET_MS,
          100,
        ).then(() => {
          if (queuedAtStop.length > 0) drainSamples.push(Date.now() - upAt);
        });
        try {
          await Promise.all([readiness, drained]);
        } finally {
          edgeClientOn = false;
          await edgeClient;
        }
        await waitFor(
          `run ${run + 1}: every job terminal`,
          async () => {
            const rows = await jobStates(runJobIds()).catch(() => []);
            return (
              rows.length === runJobIds().length && rows.every((row) => TERMINAL_STATES.includes(row.state))
            );
          },
          RUN_BUDGET_MS,
          200,
        ).then(
          () => completedSamples.push(Date.now() - upAt),
          (err: unknown) => console.warn(`[chaos] ${SCENARIO}: ${(err as Error).message}`),
        );
      }
      // A late report or promotion would land now; the checker must see it.
      await pause(3000);

      const count = (answers: Answer[], status: number) =>
        answers.filter((answer) => answer.status === status).length;
      const [attempts] = await sql<{ count: number }[]>`
        select count(*)::int as count from attempts
        where job_id = any(${jobs.map((job) => job.jobId)}::uuid[])`;
      await reportScenario(
        {
          scenario: SCENARIO,
          runs: RUNS,
          seed: random.seed,
          durationMs: Date.now() - started,
          recoveries: [
            { what: "readiness 200 after PostgreSQL returned", samplesMs: readinessSamples },
            {
              what: "dispatching again after PostgreSQL returned (a job queued at the stop dispatched)",
              samplesMs: firstDispatchSamples,
            },
            {
              what: "queue drained after PostgreSQL returned (every job queued at the stop dispatched)",
              samplesMs: drainSamples,
            },
            { what: "every job COMPLETED after PostgreSQL returned", samplesMs: completedSamples },
          ],
          notes: [
            `set-up ${setupMs} ms; PostgreSQL down ${OUTAGE_MS} ms each time; at the stops: ${atStops.join(", ")}`,
            `probes while down: ${duringOutages.length} (${count(duringOutages, 200)} 200, ${count(duringOutages, 503)} 503, ${count(duringOutages, 500)} 500)`,
            `the client submitting through the outages: ${count(aroundOutages, 201)} acknowledged, ${count(aroundOutages, 500)} refused`,
            `${AGENTS} agents, capacity 1; ${attempts?.count} attempts for ${jobs.length} jobs`,
          ],
        },
        await collectFacts(sql, log, jobs, agents),
      );

      const violations = duringOutages
        .map((answer) => ({ answer, violation: outageViolation(answer) }))
        .filter((entry) => entry.violation !== undefined);
      expect(
        violations.slice(0, 10),
        `${violations.length} of ${duringOutages.length} answers while PostgreSQL was down were not the SPEC's (the first 10)`,
      ).toEqual([]);
      for (const probe of ["live", "ready", "submit", "read"] as const) {
        expect(duringOutages.filter((answer) => answer.probe === probe).length).toBeGreaterThanOrEqual(RUNS);
      }
      const unexpected = aroundOutages.filter((answer) => answer.status !== 201 && answer.status !== 500);
      expect(unexpected, "the submitting client's answers other than 201 and 500").toEqual([]);
    } finally {
      await killAgents();
      await manager?.stop();
      await schema?.sql.end({ timeout: 2 });
      await store?.close();
      await s3?.stop();
      await issuer?.close();
      await nats?.stop();
      await postgres?.dispose();
      await scratch.cleanup();
    }
  });
});
