/**
 * PostgreSQL connection drops never kill the Manager, proven at process level: the Manager as
 * operators run it (`npm run manager`, every background loop: relay, dispatcher, monitor,
 * promoter, event hub, sweeps), 16 clients submitting jobs over HTTP the whole time, on a
 * private PostgreSQL whose Manager backends are terminated 20 times and which is stopped and
 * started 3 times, in each of 5 rounds.
 */

import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { type ManagerProcess, startManagerProcess } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET, TestIssuer } from "@tjm/devstack/oidc-issuer";
import {
  type NatsServer,
  type PrivatePostgres,
  startNatsServer,
  startPrivatePostgres,
  waitFor,
} from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject } from "../../manager/src/projects/store.ts";
import { createTestSchema } from "../harness/manager.ts";

const ROUNDS = 5;
const TERMINATIONS_PER_ROUND = 20;
const STOP_STARTS_PER_ROUND = 3;
const CLIENTS = 16;
/** How long PostgreSQL stays down each time. */
const OUTAGE_MS = 1000;
/**
 * Any answer slower than this counts as a hang. With PostgreSQL down a request fails once its
 * connection attempt is refused, at most a reconnect delay (1 s, platform/db.ts) later.
 */
const ANSWER_BOUND_MS = 5000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  sentAt: number;
  answeredAt: number;
  status?: number;
  requestId?: string | null;
  body?: unknown;
  /** The request failed without an HTTP answer: a dropped connection or the bound passed. */
  failure?: string;
}

interface Window {
  from: number;
  to: number;
}

let postgres: PrivatePostgres;
let nats: NatsServer;
let issuer: TestIssuer;
let schema: Awaited<ReturnType<typeof createTestSchema>>;
let manager: ManagerProcess;
let projectId: string;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  nats = await startNatsServer();
  issuer = await TestIssuer.start();
  schema = await createTestSchema(postgres.url);
  ({ projectId } = await createProject(schema.sql, "acme", "outage"));
  manager = await startManagerProcess("node", {
    DATABASE_URL: postgres.url,
    DATABASE_SCHEMA: schema.schema,
    NATS_URL: nats.url,
    NATS_AUTH: "none",
    NATS_SUBJECT_PREFIX: schema.schema,
    // Tokens of the harness's issuer, trusted as an external operator issuer; the built-in
    // provider is not this file's subject (tests/provider/).
    PROVIDER_ENABLED: "false",
    OIDC_ISSUER_URL: "http://127.0.0.1:1/oidc",
    OIDC_OPERATOR_ISSUER_URL: issuer.issuer,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    // No Worker runs here, so storage is never reached.
    S3_ENDPOINT: "http://127.0.0.1:1",
    S3_ACCESS_KEY_ID: "unused",
    S3_SECRET_ACCESS_KEY: "unused",
    LOG_LEVEL: "warn",
  });
}, 90_000);

afterAll(async () => {
  await manager?.stop();
  await schema?.sql.end({ timeout: 2 });
  await issuer?.close();
  await nats?.stop();
  await postgres?.dispose();
});

async function timed(path: string, init: RequestInit = {}): Promise<Answer> {
  const sentAt = Date.now();
  try {
    const response = await fetch(`${manager.baseUrl}${path}`, {
      ...init,
      signal: AbortSignal.timeout(ANSWER_BOUND_MS),
    });
    const body = await response.json();
    return {
      sentAt,
      answeredAt: Date.now(),
      status: response.status,
      requestId: response.headers.get("x-request-id"),
      body,
    };
  } catch (err) {
    return { sentAt, answeredAt: Date.now(), failure: String(err) };
  }
}

/** Readiness asked until it answers `status`; every answer before it is kept. */
async function readinessUntil(status: number, timeoutMs: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  await waitFor(
    () =>
      `readiness ${status} (answers: ${JSON.stringify(answers.slice(-3))}; the Manager's output ends: ${manager.output().slice(-2000)})`,
    async () => {
      answers.push(await timed("/api/health/ready"));
      return answers.at(-1)?.status === status;
    },
    timeoutMs,
    50,
  );
  return answers;
}

describe("the Manager under PostgreSQL connection drops and outages", () => {
  it(`survives ${ROUNDS} rounds of ${TERMINATIONS_PER_ROUND} backend terminations and ${STOP_STARTS_PER_ROUND} stop/starts under ${CLIENTS} submitting clients`, async () => {
    const token = await issuer.token({ expiresInSeconds: 900 });
    const submission = JSON.stringify(sampleSubmission(projectId));
    const submits: Answer[] = [];
    const liveness: Answer[] = [];
    const outages: Window[] = [];
    const readinessWhileDown: Answer[] = [];
    let running = true;

    const client = async () => {
      while (running) {
        submits.push(
          await timed("/api/v1/operations/jobs", {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: submission,
          }),
        );
        await pause(20);
      }
    };
    const probeLiveness = async () => {
      while (running) {
        liveness.push(await timed("/api/health/live"));
        await pause(200);
      }
    };
    const load = [...Array.from({ length: CLIENTS }, client), probeLiveness()];

    for (let round = 0; round < ROUNDS; round++) {
      for (let termination = 0; termination < TERMINATIONS_PER_ROUND; termination++) {
        await schema.sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'tjm-manager'`;
        await pause(100);
      }
      for (let stopStart = 0; stopStart < STOP_STARTS_PER_ROUND; stopStart++) {
        await postgres.stop();
        const outage = { from: Date.now(), to: 0 };
        readinessWhileDown.push((await readinessUntil(503, 10_000))[0] as Answer);
        await pause(OUTAGE_MS);
        outage.to = Date.now();
        outages.push(outage);
        await postgres.start();
        await readinessUntil(200, 20_000);
      }
    }
    running = false;
    await Promise.all(load);

    const failures = [...submits, ...liveness].filter((answer) => answer.failure);
    expect(failures, "requests without an HTTP answer (dropped or hung)").toEqual([]);
    expect(liveness.filter((answer) => answer.status !== 200)).toEqual([]);

    // Readiness answers 503 at once when PostgreSQL is stopped, naming the database.
    for (const answer of readinessWhileDown) {
      expect(answer).toMatchObject({
        status: 503,
        body: { status: "error", error: { database: { status: "down" } } },
      });
    }

    const duringOutage = submits.filter((answer) =>
      outages.some((outage) => answer.sentAt >= outage.from && answer.answeredAt <= outage.to),
    );
    expect(duringOutage.length).toBeGreaterThan(0);
    expect(new Set(duringOutage.map((answer) => answer.status))).toEqual(new Set([500]));
    expect(new Set(submits.map((answer) => answer.status))).toEqual(new Set([201, 500]));
    for (const answer of submits.filter((a) => a.status === 500)) {
      expect(answer.body).toEqual({
        statusCode: 500,
        error: "Internal Server Error",
        message: `Internal error (request id ${answer.requestId})`,
        code: "internal.error",
        requestId: answer.requestId,
      });
    }

    // Every job that got a 201 is stored with its first attempt and its job.created outbox row.
    const created = submits
      .filter((answer) => answer.status === 201)
      .map((answer) => (answer.body as { id: string }).id);
    const stored = await schema.sql<{ id: string }[]>`
      select j.id from jobs j
      join attempts a on a.id = j.current_attempt_id and a.job_id = j.id and a.attempt_number = 1
      join outbox o on o.kind = 'job.created' and o.payload ->> 'jobId' = j.id::text
      where j.id = any(${created}::uuid[])`;
    expect(stored.map((row) => row.id).sort()).toEqual([...created].sort());
  }, 240_000);
});
