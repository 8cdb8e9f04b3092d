/**
 * Restarts under a running job, on a real agent, ffmpeg and s3rver: the Manager (closed and
 * started again on the same schema and the same port, where the agent's MANAGER_URL points)
 * and NATS (a private nats-server with a file store, stopped with SIGTERM and started again
 * on the same port and store). Each time the job completes with its one attempt: no report,
 * lease or output is lost.
 *
 * "Mid-encode" is made certain rather than hoped for: the agent's ffmpeg is frozen (SIGSTOP)
 * while the restart happens and thawed afterwards, so how fast this machine encodes does not
 * decide whether the restart fell inside the encode.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { freePort, type NatsServer, startNatsServer, waitFor } from "@tjm/devstack/services";
import { MANAGER_REPORTS_CONSUMER, streams } from "@tjm/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSchema, TestManager, type TestManagerOptions, testServices } from "../harness/manager.ts";
import {
  Freezer,
  listKeys,
  putClip,
  readObject,
  sha256,
  startTestAgent,
  twoOutputPlan,
} from "../harness/media-jobs.ts";
import { waitForWorker } from "../harness/workers-api.ts";

const INPUT = "s3://media-in/clip.mp4";

let s3: S3Server;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
const freezer = new Freezer();

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  scratch = await agentDirs();
  await putClip(s3, { bucket: "media-in", key: "clip.mp4" }, 20, "640x360");
}, 60_000);

afterAll(async () => {
  freezer.thawAll();
  await killAgents();
  await s3?.stop();
  await scratch?.cleanup();
});

const settings = (): TestManagerOptions => ({
  storage: s3.settings,
  heartbeatIntervalMs: 300,
  // Well past any restart here: a Worker lost during one would be a different test.
  lostAfterMs: 10_000,
  dispatchTimeoutMs: 10_000,
});

/** The shared two-output plan, its outputs under s3://media-out/<prefix>/. */
const submit = (manager: TestManager, projectId: string, prefix: string) =>
  manager.submitJob({ projectId, executionPlan: twoOutputPlan(INPUT, prefix) });

/**
 * Waits until the agent encodes the job's attempt, freezes its ffmpeg, and waits until the
 * Manager has handled `accepted` and `started`: the restart then finds no report in flight.
 */
async function freezeEncode(manager: TestManager, agent: AgentProcess, jobId: string) {
  const attemptId = (await manager.job(jobId)).currentAttemptId as string;
  const encoding = await agent.waitForLog(
    (line) => line.msg === "encoding" && line.attemptId === attemptId,
    30_000,
  );
  const pid = encoding.pid as number;
  freezer.freeze(pid);
  await manager.untilJob(jobId, "RUNNING", { timeoutMs: 20_000, pollMs: 50 });
  // `started` was stored before the agent logged `encoding`: once the Manager's consumer has
  // nothing pending or unacked, every report so far was handled.
  const nc = await connect({ servers: manager.natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    await waitFor(
      "every report handled",
      async () => {
        const info = await jsm.consumers.info(
          streams(manager.subjectPrefix).reports.name,
          MANAGER_REPORTS_CONSUMER,
        );
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      10_000,
      50,
    );
  } finally {
    await nc.close();
  }
  return { attemptId, pid };
}

/** COMPLETED with its one attempt, outputs at their destinations as the manifest says. */
async function expectCompleted(manager: TestManager, jobId: string, attemptId: string, prefix: string) {
  const done = await manager.untilJob(jobId, "COMPLETED", { timeoutMs: 45_000, pollMs: 100 });
  expect(done.attempts.map((a: { id: string; state: string }) => [a.id, a.state])).toEqual([
    [attemptId, "SUCCEEDED"],
  ]);
  const manifest = JSON.parse((await readObject(s3, `s3://media-out/${prefix}/manifest.json`)).toString());
  expect(manifest).toMatchObject({ jobId, attemptId, attemptNumber: 1 });
  expect(manifest.outputs.map((output: { uri: string }) => output.uri)).toEqual([
    `s3://media-out/${prefix}/small.mp4`,
    `s3://media-out/${prefix}/web.webm`,
  ]);
  for (const output of manifest.outputs as { uri: string; sha256: string; bytes: number }[]) {
    const bytes = await readObject(s3, output.uri);
    expect(bytes.length).toBe(output.bytes);
    expect(await sha256(bytes)).toBe(output.sha256);
  }
  expect(await listKeys(s3, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);
}

/**
 * One Manager on a schema the file owns, served on a port the file chose, on a private
 * nats-server with a file store the file owns: both can be restarted in place. One agent
 * rides every restart.
 */
describe("restarts under a running job", () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let port: number;
  let storeDir: string;
  let nats: NatsServer;
  let manager: TestManager;
  let agent: AgentProcess;
  let projectId: string;

  const startManager = () =>
    TestManager.start({ ...settings(), schema: schema.schema, port, natsUrl: nats.url });
  /** Stops the Manager as a deployment would, leaving its streams, and its Workers' consumers, in place. */
  const stopManager = () => manager.close({ keepStreams: true });

  beforeAll(async () => {
    schema = await createTestSchema(testServices().databaseUrl);
    port = await freePort();
    storeDir = await mkdtemp(join(tmpdir(), "tjm-nats-restart-"));
    nats = await startNatsServer({ storeDir });
    manager = await startManager();
    ({ projectId } = await manager.createProject());
    agent = await startTestAgent(manager, scratch.root, "restarts");
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await manager?.close();
    await nats?.stop();
    await schema?.drop();
    if (storeDir) await rm(storeDir, { recursive: true, force: true });
  });

  it("the Manager, mid-encode, back before the encode ends: the job completes with its one attempt", async () => {
    const jobId = await submit(manager, projectId, "restart-during");
    const { attemptId, pid } = await freezeEncode(manager, agent, jobId);
    const before = manager.baseUrl;
    await stopManager();
    manager = await startManager();
    expect(manager.baseUrl).toBe(before);
    freezer.thaw(pid);
    await expectCompleted(manager, jobId, attemptId, "restart-during");
  });

  it("the Manager, mid-encode, the encode, uploads and reports finishing while none runs: nothing is lost", async () => {
    const jobId = await submit(manager, projectId, "restart-across");
    const { attemptId, pid } = await freezeEncode(manager, agent, jobId);
    await stopManager();
    freezer.thaw(pid);
    // Reports wait in the stream; staged outputs in S3.
    await agent.waitForLog(
      (line) => line.msg === "attempt completed" && line.attemptId === attemptId,
      30_000,
    );
    manager = await startManager();
    await expectCompleted(manager, jobId, attemptId, "restart-across");
  });

  it("NATS, mid-encode, on the same port and file store: the job completes with its one attempt", async () => {
    const jobId = await submit(manager, projectId, "nats-restart");
    const { attemptId, pid } = await freezeEncode(manager, agent, jobId);
    const natsPort = Number(new URL(nats.url).port);
    const disconnects = agent.logs.filter(
      (line) => line.msg === "disconnected from NATS; reconnecting",
    ).length;
    await nats.stop();
    await agent.waitForLog(
      (line) =>
        line.msg === "disconnected from NATS; reconnecting" &&
        agent.logs.filter((seen) => seen.msg === line.msg).length > disconnects,
      10_000,
    );
    nats = await startNatsServer({ port: natsPort, storeDir });
    await agent.waitForMessage("reconnected to NATS", 20_000);
    freezer.thaw(pid);
    await expectCompleted(manager, jobId, attemptId, "nats-restart");
  });

  it("the agent rode every restart on its first instance, and is ONLINE", async () => {
    expect(agent.logs.filter((line) => line.msg === "worker re-registered")).toEqual([]);
    expect(agent.logs.filter((line) => line.level === "error")).toEqual([]);
    const workerId = agent.logs.find((line) => line.msg === "worker registered")?.workerId as string;
    await waitForWorker(manager, workerId, (w) => w.connectivity === "ONLINE", 20_000);
  });
});
