/**
 * Following one job through the logs (issue 14, item 5), as docs/observability.md shows it: a Manager
 * process started the way an operator starts one (`npm run manager`, LOG_LEVEL at its default)
 * and a real CPU Worker agent, each writing JSON lines on stdout. One job runs to COMPLETED and
 * a second is cancelled; then each process's lines are kept by the job's id alone, as
 * `jq 'select(.jobId == $id)'` keeps them, and must tell the job's story with the ids that join
 * them: request, attempt and Worker.
 */
import {
  type AgentProcess,
  agentDirs,
  killAgents,
  type LogLine,
  startAgent,
} from "@tjm/devstack/agent-process";
import { type ManagerProcess, startManagerProcess } from "@tjm/devstack/manager-process";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET, TestIssuer } from "@tjm/devstack/oidc-issuer";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { waitFor } from "@tjm/devstack/services";
import { deleteStreams } from "@tjm/devstack/streams";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createProject } from "../../manager/src/projects/store.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";
import { putClip } from "../harness/media-jobs.ts";

// A real encode on two cores shared with other test files: generous limits.
vi.setConfig({ testTimeout: 120_000 });

/** The subject of the harness issuer's tokens: the operator the Manager names in its logs. */
const OPERATOR = "operator@example.com";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let issuer: TestIssuer;
let s3: S3Server;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
let manager: ManagerProcess;
let agent: AgentProcess;
let projectId: string;
/** How long the Manager process and the agent took to be ready, for the failure messages. */
const startup = { managerMs: 0, agentMs: 0 };

beforeAll(async () => {
  const services = testServices();
  schema = await createTestSchema(services.databaseUrl);
  issuer = await TestIssuer.start();
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  scratch = await agentDirs();
  ({ projectId } = await createProject(schema.sql, "acme", "logs"));
  await putClip(s3, { bucket: "media-in", key: "clip.mp4" }, 2, "320x240");

  let since = Date.now();
  manager = await startManagerProcess("node", {
    DATABASE_URL: services.databaseUrl,
    DATABASE_SCHEMA: schema.schema,
    NATS_URL: services.natsUrl,
    NATS_AUTH: "none",
    NATS_SUBJECT_PREFIX: schema.schema,
    // Tokens of the harness's issuer, trusted for operations; the provider is not the subject here.
    PROVIDER_ENABLED: "false",
    OIDC_ISSUER_URL: "http://127.0.0.1:1/oidc",
    OIDC_OPERATOR_ISSUER_URL: issuer.issuer,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
    S3_ENDPOINT: s3.settings.endpoint,
    S3_ACCESS_KEY_ID: s3.settings.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.settings.secretAccessKey,
    // debug, to see the one report that changes nothing (`started`); every other line checked
    // here must be `info`, so the default LOG_LEVEL shows it.
    LOG_LEVEL: "debug",
  });
  startup.managerMs = Date.now() - since;

  since = Date.now();
  const enrolled = await operations("/enrollment-tokens", { method: "POST", json: {} });
  expect(enrolled.status, await enrolled.clone().text()).toBe(201);
  agent = startAgent({
    MANAGER_URL: manager.baseUrl,
    ENROLLMENT_TOKEN: ((await enrolled.json()) as { token: string }).token,
    WORKER_STATE_DIR: scratch.stateDir,
    WORKER_WORK_DIR: scratch.workDir,
    WORKER_NAME: "follow-logs",
    WORKER_CAPACITY: "1",
    // Every line the agent can write is checked for its Worker id, debug ones included.
    LOG_LEVEL: "debug",
  });
  await agent.waitForMessage("worker started", 30_000);
  startup.agentMs = Date.now() - since;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await killAgents();
  await manager?.stop();
  await deleteStreams(testServices().natsUrl, schema.schema).catch(() => {});
  await schema?.drop();
  await s3?.stop();
  await issuer?.close();
  await scratch?.cleanup();
});

/** An operations route of the Manager process, with an operator token. */
async function operations(path: string, init: { method?: string; json?: unknown } = {}): Promise<Response> {
  return fetch(`${manager.baseUrl}/api/v1/operations${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${await issuer.token({ expiresInSeconds: 900 })}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
}

/**
 * The Manager's complete JSON lines so far: npm's notes on stderr are not JSON and are left out,
 * and so is a last line still being written.
 */
function managerLines(): LogLine[] {
  const lines: LogLine[] = [];
  for (const text of manager.output().split("\n").slice(0, -1)) {
    if (!text.startsWith("{")) continue;
    lines.push(JSON.parse(text) as LogLine);
  }
  return lines;
}

/** What `jq 'select(.jobId == $id)'` keeps. */
const ofJob = (lines: LogLine[], jobId: string) => lines.filter((line) => line.jobId === jobId);

/** Submits a job of the test's project: its and its first attempt's ids, and the request id of the answer. */
async function submit(body: Record<string, unknown>) {
  const response = await operations("/jobs", { method: "POST", json: { projectId, ...body } });
  expect(response.status, await response.clone().text()).toBe(201);
  const job = (await response.json()) as { id: string; currentAttemptId: string };
  return { jobId: job.id, attemptId: job.currentAttemptId, requestId: response.headers.get("x-request-id") };
}

describe("one job followed through the Manager's and the Worker's logs", () => {
  it("the Manager's lines of a job carry its request, attempt and Worker ids; the agent's carry job, attempt and Worker", async () => {
    const { jobId, attemptId, requestId } = await submit({
      executionPlan: {
        input: { uri: "s3://media-in/clip.mp4" },
        outputs: [
          {
            id: "small",
            kind: "FILE",
            container: "mp4",
            destinationUri: "s3://media-out/follow/small.mp4",
            video: { codec: "h264", height: 144, preset: "fastest" },
            audio: { codec: "aac", bitrateKbps: 64 },
          },
        ],
      },
    });
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(
      () => `job ${jobId} COMPLETED (startup: ${JSON.stringify(startup)})\n${agent.describe()}`,
      async () =>
        ((await (await operations(`/jobs/${jobId}`)).json()) as { state: string }).state === "COMPLETED",
      90_000,
    );
    // Both processes log just after the step they describe: wait for each last line itself.
    await agent.waitForMessage("attempt completed", 10_000);
    await waitFor("the Manager's job completed line", async () =>
      ofJob(managerLines(), jobId).some((line) => line.msg === "job completed"),
    );

    const registered = await agent.waitForMessage("worker registered");
    const workerId = registered.workerId as string;
    expect(workerId).toMatch(/^[0-9a-f-]{36}$/);

    // ---- the Manager ----
    const fromManager = ofJob(managerLines(), jobId);
    const context = fromManager.map((line) => JSON.stringify(line)).join("\n");
    expect(
      fromManager.find((line) => line.msg === "job submitted"),
      context,
    ).toMatchObject({
      level: "info",
      requestId,
      jobId,
      attemptId,
      projectId,
      workerPool: "cpu",
      priority: 0,
    });
    expect(
      fromManager.find((line) => line.msg === "lease dispatched"),
      context,
    ).toMatchObject({ level: "info", jobId, attemptId, workerId });
    // One consumer applies a Worker's reports in the order it sent them. `started` follows
    // `accepted`, which already made the attempt RUNNING: it changes nothing (debug). The
    // completed report is the commit point; the job is COMPLETED once the outputs are promoted.
    const reports = fromManager.filter((line) => typeof line.type === "string");
    expect(
      reports.map((line) => [line.msg, line.level, line.type, line.attemptId, line.workerId]),
      context,
    ).toEqual([
      ["report applied", "info", "accepted", attemptId, workerId],
      ["report changes nothing", "debug", "started", attemptId, workerId],
      ["report applied", "info", "encoded", attemptId, workerId],
      ["report applied", "info", "completed", attemptId, workerId],
    ]);
    expect(reports.map((line) => [line.transition, line.jobState, line.attemptState])).toEqual([
      ["lease-accepted", "RUNNING", "RUNNING"],
      [undefined, undefined, undefined],
      ["encoded", undefined, "UPLOADING"],
      ["completion-accepted", undefined, "UPLOADING"],
    ]);
    // The job is COMPLETED once its outputs are promoted: logged after that commit.
    expect(fromManager.at(-1), context).toMatchObject({
      msg: "job completed",
      level: "info",
      jobId,
      attemptId,
      jobState: "COMPLETED",
    });
    // docs/observability.md sorts the two processes' lines by `time`: every line has one, ISO 8601 in UTC.
    for (const line of fromManager) expect(new Date(line.time).toISOString()).toBe(line.time);

    // ---- the Worker agent ----
    expect(agent.otherOutput).toEqual([]);
    const fromAgent = agent.logs.filter((line) => line.jobId === jobId || line.attemptId === attemptId);
    const agentContext = fromAgent.map((line) => JSON.stringify(line)).join("\n");
    expect(fromAgent.map((line) => line.msg)).toEqual(
      expect.arrayContaining(["lease accepted", "encoding", "attempt completed"]),
    );
    for (const line of fromAgent) {
      expect(
        { msg: line.msg, jobId: line.jobId, attemptId: line.attemptId, workerId: line.workerId },
        agentContext,
      ).toEqual({
        msg: line.msg,
        jobId,
        attemptId,
        workerId,
      });
    }
    // Once registered, the agent names itself on every line, whatever logged it (NATS, the
    // command consumer, …: more than the attempt's lines).
    const afterRegistration = agent.logs.slice(agent.logs.indexOf(registered));
    expect(afterRegistration.length).toBeGreaterThan(fromAgent.length);
    const unnamed = afterRegistration.filter((line) => line.workerId !== workerId);
    expect(unnamed, agent.describe()).toEqual([]);
  });

  it("a cancel is logged with its request id and the operator; a job no Worker held leaves no agent line", async () => {
    // The nvidia pool has no Worker here: the job stays QUEUED until cancelled.
    const { jobId, requestId: submitRequestId } = await submit({
      requirements: { requiredCapabilities: ["h264_nvenc"] },
      executionPlan: {
        input: { uri: "s3://media-in/clip.mp4" },
        outputs: [
          {
            id: "small",
            kind: "FILE",
            container: "mp4",
            destinationUri: "s3://media-out/cancelled/small.mp4",
            video: { codec: "h264", height: 144 },
          },
        ],
      },
    });
    const cancelled = await operations(`/jobs/${jobId}/cancel`, { method: "POST" });
    expect(cancelled.status, await cancelled.clone().text()).toBe(202);
    expect(((await cancelled.json()) as { state: string }).state).toBe("CANCELLED");
    const cancelRequestId = cancelled.headers.get("x-request-id");
    expect(cancelRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(cancelRequestId).not.toBe(submitRequestId);

    // Logged before the answer was sent, but stdout is a pipe of its own: it may still be on its way.
    const cancelLine = (line: LogLine) => line.msg === "job cancel requested";
    await waitFor("the Manager's cancel line", async () => ofJob(managerLines(), jobId).some(cancelLine));
    const fromManager = ofJob(managerLines(), jobId);
    expect(fromManager.map((line) => [line.msg, line.requestId])).toEqual([
      ["job submitted", submitRequestId],
      ["job cancel requested", cancelRequestId],
    ]);
    expect(fromManager[0]).toMatchObject({ workerPool: "nvidia" });
    expect(fromManager[1]).toMatchObject({ level: "info", jobId, operator: OPERATOR });
    expect(ofJob(agent.logs, jobId)).toEqual([]);
  });
});
