/**
 * Property-based fuzzing of every route in the OpenAPI document the running Manager serves (so a
 * new route is fuzzed with no edit here): parameters and bodies from the documented schemas,
 * valid, mutated and hostile, with tokens of every kind. On every answer: a documented status,
 * no 5xx but a documented 503, a body matching the documented schema, the error shape on
 * errors, and the route's documented security held. The seed is printed; FUZZ_SEED replays it.
 */

import { createUser } from "@nats-io/nkeys";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { waitFor } from "@tjm/devstack/services";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OPENAPI_PATH } from "../../manager/src/docs/index.ts";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { TestManager } from "../harness/manager.ts";
import { ProtocolWorker } from "../harness/protocol-worker.ts";
import { subscribeEvents } from "../harness/sse.ts";
import { challenge, enroll, issueToken, sign } from "../harness/workers.ts";
import type { SchemaContext } from "./arbitraries.ts";
import { type Answer, answerProblems, mediaTypeOf, ResponseValidators } from "./invariants.ts";
import { type OpenApiDocument, type Operation, operationsOf } from "./operations.ts";
import { describeRequest, type FuzzRequest, requestArbitrary, requestInit, urlOf } from "./requests.ts";
import { authProblem, type MintedTokens, mintTokens, signedInToken } from "./tokens.ts";

/** Runs per route: docs/development.md, "Route fuzzing", says what they cover. */
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 100);
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);
/** Set on the Manager, so bodies are padded to just under, at and just over it. */
const BODY_LIMIT_BYTES = 1_048_576;
/** An answer slower than this is a hang, reported with its request. */
const ANSWER_TIMEOUT_MS = 10_000;
const ROUTE_TIMEOUT_MS = 90_000;
/** A Manager that takes longer to stop is stuck on something a request left behind. */
const CLOSE_TIMEOUT_MS = 15_000;

console.log(
  `route fuzzing: seed ${SEED}, ${RUNS_PER_ROUTE} runs per route; replay with FUZZ_SEED=${SEED} npx vitest run tests/fuzz/routes.test.ts (add -t '<route>' for one route)`,
);

const manager = await TestManager.start({
  env: { MAX_BODY_BYTES: String(BODY_LIMIT_BYTES) },
  heartbeatIntervalMs: 200,
  maxAttempts: 1,
});
afterAll(async () => {
  console.log(`statuses answered, by route:\n${statusSummary()}`);
  await worker?.stop();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the Manager did not stop within ${CLOSE_TIMEOUT_MS} ms after the fuzzing`)),
      CLOSE_TIMEOUT_MS,
    );
  });
  await Promise.race([manager.close(), stuck]).finally(() => clearTimeout(timer));
});
const document = (await (await fetch(`${manager.baseUrl}${OPENAPI_PATH}`)).json()) as OpenApiDocument;
const operations = operationsOf(document);
const validators = new ResponseValidators(document);

let worker: ProtocolWorker | undefined;
let tokens: MintedTokens;
let projectId: string;
/** Values of objects that exist, offered for parameters and properties of these names. */
const known = new Map<string, string[]>();
const remember = (name: string, ...values: string[]) =>
  known.set(name, [...(known.get(name) ?? []), ...values]);
/** Values made again before each route: the routes before it may have used them up. */
const fresh = new Map<string, string[]>();

const context: SchemaContext = {
  components: document.components?.schemas ?? {},
  known: (name) => {
    const values = [...(known.get(name) ?? []), ...(fresh.get(name) ?? [])];
    return values.length > 0 ? fc.constantFrom(...values) : undefined;
  },
};

/** An nvidia job stays queued: no nvidia Worker runs here. */
const queuedSubmission = (project: string) =>
  sampleSubmission(project, { requirements: { requiredCapabilities: ["h264_nvenc"] } });

/** A job held by the protocol Worker, taken as far as `reports` go. */
async function heldJob(project: string, reports: ("accepted" | "started" | "encoded")[]) {
  const running = worker as ProtocolWorker;
  const jobId = await manager.submitJob(sampleSubmission(project));
  const lease = await running.nextLease(jobId);
  for (const report of reports) await running.report(report, lease);
  return { jobId, lease };
}

beforeAll(async () => {
  const own = await manager.createProject();
  const other = await manager.createProject();
  projectId = own.projectId;
  remember("projectId", own.projectId, other.projectId);
  remember("organizationId", own.organizationId);
  tokens = await mintTokens(manager, { own: own.projectId, other: other.projectId });
  // Not offered as a known Worker: drained or disabled by a route, it would hold no more jobs.
  // Room for every lease of the run: the jobs fuzzed into existence are held and never finish.
  worker = await ProtocolWorker.start(manager, {
    overrides: {
      capacityCap: null,
      probe: {
        ffmpegVersion: "5.1.9",
        capabilities: ["libx264", "libx265", "libvpx-vp9", "libsvtav1", "aac", "libopus", "libmp3lame"],
        hardwareEncoders: [],
        certification: { status: "READY", reasons: [] },
        capacity: 1024,
      },
    },
  });

  const cancelled = await manager.submitJob(queuedSubmission(own.projectId));
  await manager.request(`/api/v1/operations/jobs/${cancelled}/cancel`, { method: "POST" });
  const completed = await manager.submitJob(queuedSubmission(own.projectId));
  await manager.forceJobState(completed, "COMPLETED", "SUCCEEDED");
  const elsewhere = await manager.submitJob(queuedSubmission(other.projectId));
  const running = await heldJob(own.projectId, ["accepted", "started"]);
  await manager.untilJob(running.jobId, "RUNNING");
  remember("jobId", cancelled, completed, elsewhere, running.jobId);
  remember("attemptId", running.lease.attemptId);
});

/**
 * Before each route: a job queued, one failed and one waiting for storage, an enrolled Worker
 * with a challenge of each purpose signed, and unused enrollment tokens — the routes before may
 * have cancelled, disabled or used up the last ones.
 */
beforeEach(async () => {
  const queued = await manager.submitJob(queuedSubmission(projectId));
  const waiting = await heldJob(projectId, ["accepted", "encoded"]);
  await worker?.report("upload-paused", waiting.lease, {
    reason: "S3 unreachable",
    pausedAt: new Date().toISOString(),
  });
  const failed = await heldJob(projectId, ["accepted"]);
  await worker?.report("failed", failed.lease, {
    failureCode: "INPUT_UNREADABLE",
    failureMessage: "no input",
  });
  await manager.untilJob(waiting.jobId, "WAITING_FOR_STORAGE", { pollMs: 20 });
  await manager.untilJob(failed.jobId, "FAILED", { pollMs: 20 });
  fresh.set("jobId", [queued, waiting.jobId, failed.jobId]);
  fresh.set("attemptId", [waiting.lease.attemptId]);
  // Intel, so it never takes the leases of the cpu jobs above: it never heartbeats or answers.
  const idle = await enroll(manager, { pool: "intel" });
  fresh.set("workerId", [idle.workerId]);
  fresh.set("instanceId", [idle.instanceId]);
  fresh.set("publicKey", [createUser().getPublicKey()]);
  // Pinned to pools the run's cpu jobs never go to: a Worker the registrations route enrols with
  // an unpinned token could declare cpu and take the protocol Worker's leases.
  fresh.set("enrollmentToken", [
    await issueToken(manager, { pool: "intel" }),
    await issueToken(manager, { pool: "nvidia" }),
  ]);
  fresh.set("challengeId", []);
  fresh.set("signature", []);
  for (const purpose of ["credentials", "re-registration"] as const) {
    const answered = await challenge(manager, idle.workerId, purpose);
    fresh.get("challengeId")?.push(answered.challengeId);
    fresh.get("signature")?.push(sign(idle.keyPair, idle.workerId, answered));
  }
});

/** Statuses seen per route, printed at the end: how far the fuzzing got past validation and auth. */
const statusesSeen = new Map<string, Map<number, number>>();

function countStatus(operation: Operation, status: number): void {
  const counts = statusesSeen.get(operation.label) ?? new Map<number, number>();
  counts.set(status, (counts.get(status) ?? 0) + 1);
  statusesSeen.set(operation.label, counts);
}

function statusSummary(): string {
  return [...statusesSeen]
    .map(([label, counts]) => {
      const sorted = [...counts].sort(([a], [b]) => a - b);
      return `  ${label}: ${sorted.map(([status, count]) => `${status}×${count}`).join(" ")}`;
    })
    .join("\n");
}

/** Sends the request and reads the answer; a stream is aborted once its headers are in. */
async function exchange(operation: Operation, request: FuzzRequest): Promise<Answer> {
  const stream = new AbortController();
  const signal = AbortSignal.any([stream.signal, AbortSignal.timeout(ANSWER_TIMEOUT_MS)]);
  const response = await fetch(
    `${manager.baseUrl}${urlOf(operation, request)}`,
    requestInit(operation, request, tokens, signal),
  );
  const contentType = response.headers.get("content-type");
  const wwwAuthenticate = response.headers.get("www-authenticate");
  if (mediaTypeOf(contentType) === "text/event-stream") {
    stream.abort();
    return { status: response.status, contentType, text: "", wwwAuthenticate };
  }
  const text = await response.text();
  let json: unknown;
  if (mediaTypeOf(contentType) === "application/json") {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: response.status, contentType, text, json, wwwAuthenticate };
}

/**
 * Routes that end the account-portal token's own session or account when they succeed: later
 * requests of their run may get 401 for that token, and the next route gets a fresh one.
 */
const ENDS_ACCOUNT_TOKEN = new Set([
  "POST /api/v1/me/logout",
  "POST /api/v1/me/logout/all",
  "DELETE /api/v1/me",
]);
let accountTokenEnded = false;

async function problemsOf(operation: Operation, request: FuzzRequest): Promise<string[]> {
  let answer: Answer;
  try {
    answer = await exchange(operation, request);
  } catch (err) {
    // fetch's own message is only "fetch failed": the reason is in its cause.
    const cause =
      err instanceof Error && err.cause instanceof Error ? ` (${err.cause.name}: ${err.cause.message})` : "";
    return [`no answer: ${err instanceof Error ? `${err.name}: ${err.message}${cause}` : String(err)}`];
  }
  countStatus(operation, answer.status);
  const problems = answerProblems(operation, answer, validators);
  const message = (answer.json as { message?: unknown } | undefined)?.message;
  const byAccountToken = request.token.kind === "account-portal";
  if (byAccountToken && ENDS_ACCOUNT_TOKEN.has(operation.label) && answer.status < 300)
    accountTokenEnded = true;
  if (byAccountToken && accountTokenEnded && answer.status === 401) return problems;
  const auth = authProblem(operation.security, request.token, {
    status: answer.status,
    message: typeof message === "string" ? message : undefined,
    wwwAuthenticate: answer.wwwAuthenticate,
  });
  if (auth) problems.push(auth);
  if (problems.length > 0) {
    problems.push(
      `answer: ${answer.status} ${answer.contentType ?? "(no content type)"} ${answer.text.slice(0, 500)}`,
    );
  }
  return problems;
}

describe("fuzzing every route of the OpenAPI document", () => {
  it("the document lists the routes to fuzz", () => {
    expect(operations.length).toBeGreaterThan(0);
  });

  for (const operation of operations) {
    it(
      `${operation.label} answers as documented to any request and token`,
      async () => {
        await fc.assert(
          fc.asyncProperty(requestArbitrary(operation, context, BODY_LIMIT_BYTES), async (request) => {
            const problems = await problemsOf(operation, request);
            if (problems.length > 0) {
              throw new Error(`${problems.join("\n")}\nrequest:\n  ${describeRequest(operation, request)}`);
            }
          }),
          { seed: SEED, numRuns: RUNS_PER_ROUTE },
        );
        if (accountTokenEnded) {
          tokens["account-portal"] = await signedInToken(manager, ACCOUNT_PORTAL_AUDIENCE);
          accountTokenEnded = false;
        }
      },
      ROUTE_TIMEOUT_MS,
    );
  }

  it("the Manager still answers after the fuzzing, and still streams events", async () => {
    expect((await fetch(`${manager.baseUrl}/api/health/ready`)).status).toBe(200);
    expect((await manager.request("/api/v1/operations/jobs")).status).toBe(200);
    const stream = await subscribeEvents(manager);
    try {
      const jobId = await manager.submitJob(queuedSubmission(projectId));
      await waitFor(
        `job.created of job ${jobId} on an events stream opened after the fuzzing`,
        async () =>
          stream.events().some((event) => event.event === "job.created" && event.data?.includes(jobId)),
        5000,
      );
    } finally {
      await stream.close();
    }
  });
});

describe("routes outside the document", () => {
  it.each([OPENAPI_PATH, "/api/docs"])("%s answers 200 without a token, and with a bad one", async (path) => {
    expect((await fetch(`${manager.baseUrl}${path}`)).status).toBe(200);
    const withGarbage = await fetch(`${manager.baseUrl}${path}`, {
      headers: { authorization: "Bearer garbage" },
    });
    expect(withGarbage.status).toBe(200);
  });
});
