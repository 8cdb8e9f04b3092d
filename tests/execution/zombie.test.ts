/**
 * A zombie Worker on real processes: an agent frozen (SIGSTOP, it and its ffmpeg) while it
 * encodes goes silent past WORKER_LOST_AFTER_MS, its attempt fails WORKER_LOST and a second
 * agent completes the next one. Thawed (SIGCONT), the zombie finishes its encode, uploads to
 * its own attempt-scoped staging keys and reports `encoded` and `completed`: the fencing check
 * turns every report away as stale, and since only the Manager promotes staged outputs, and
 * only those of the attempt whose completion it accepted, nothing at the destinations or on
 * the job changes.
 */

import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
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

const LOST_AFTER_MS = 3000;

let s3: S3Server;
let manager: TestManager;
let projectId: string;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
const freezer = new Freezer();
const strayPids: number[] = [];

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  manager = await TestManager.start({
    storage: s3.settings,
    heartbeatIntervalMs: 300,
    lostAfterMs: LOST_AFTER_MS,
    dispatchTimeoutMs: 10_000,
  });
  ({ projectId } = await manager.createProject());
  scratch = await agentDirs();
  await putClip(s3, { bucket: "media-in", key: "long.mp4" }, 20, "640x360");
}, 60_000);

afterAll(async () => {
  freezer.thawAll();
  for (const pid of strayPids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  await killAgents();
  await manager?.close();
  await s3?.stop();
  await scratch?.cleanup();
});

describe("a zombie Worker", () => {
  it("is lost while frozen; thawed, none of its reports or uploads changes the job or its outputs", async () => {
    const zombie: AgentProcess = await startTestAgent(manager, scratch.root, "zombie");
    const jobId = await manager.submitJob({
      projectId,
      executionPlan: twoOutputPlan("s3://media-in/long.mp4", "zombie"),
    });
    const lostAttemptId = (await manager.job(jobId)).currentAttemptId as string;
    const encoding = await zombie.waitForLog(
      (line) => line.msg === "encoding" && line.attemptId === lostAttemptId,
      30_000,
    );
    const ffmpegPid = encoding.pid as number;
    strayPids.push(ffmpegPid);
    // The whole host hangs: ffmpeg first, so the agent cannot see it finish.
    freezer.freeze(ffmpegPid, zombie.child.pid as number);
    const frozenAt = Date.now();

    const rescuer = await startTestAgent(manager, scratch.root, "rescuer");
    const lost = await manager.untilJob(jobId, "COMPLETED", {
      timeoutMs: 45_000,
      pollMs: 100,
      what: "the next attempt COMPLETED",
    });
    expect(Date.now() - frozenAt).toBeGreaterThanOrEqual(LOST_AFTER_MS);
    expect(
      lost.attempts.map((a: { id: string; state: string; failureCode: string | null }) => [
        a.id === lostAttemptId,
        a.state,
        a.failureCode,
      ]),
    ).toEqual([
      [true, "FAILED", "WORKER_LOST"],
      [false, "SUCCEEDED", null],
    ]);
    const winner = lost.attempts[1].id as string;
    const manifestUri = "s3://media-out/zombie/manifest.json";
    const manifestBefore = await readObject(s3, manifestUri);
    const manifest = JSON.parse(manifestBefore.toString());
    expect(manifest).toMatchObject({ jobId, attemptId: winner, attemptNumber: 2 });
    const destinations = async () =>
      Promise.all(
        manifest.outputs.map(async (output: { uri: string }) => sha256(await readObject(s3, output.uri))),
      );
    const checksumsBefore = await destinations();
    expect(checksumsBefore).toEqual(manifest.outputs.map((output: { sha256: string }) => output.sha256));
    // The winner's staging objects were discarded once promoted; the zombie has staged nothing yet.
    expect(await listKeys(s3, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);

    const counters = manager.manager.execution.reports.counters;
    const staleBefore = counters.stale["not-current-attempt"] ?? 0;
    const appliedBefore = counters.applied;
    const promotedBefore = manager.manager.execution.promoter.counters.promoted;

    // Thawed: the cancel the Manager queued when it declared the Worker lost is waiting in its
    // durable consumer, so the zombie stops the attempt and cleans up instead of finishing it.
    freezer.thaw(ffmpegPid, zombie.child.pid as number);
    await zombie.waitForLog(
      (line) => line.msg === "attempt cancelled" && line.attemptId === lostAttemptId,
      45_000,
    );
    // Whatever it reported on the way (`encoded`, `cancelled`) was turned away as stale.
    await waitFor(
      "the zombie's reports counted as stale",
      async () => (counters.stale["not-current-attempt"] ?? 0) > staleBefore,
      15_000,
      50,
    );
    expect(counters.applied).toBe(appliedBefore);
    expect(manager.manager.execution.promoter.counters.promoted).toBe(promotedBefore);

    // Anything it staged is under its own attempt's keys, never promoted.
    for (const key of await listKeys(s3, "media-out", `.tjm-staging/${jobId}/`)) {
      expect(key.startsWith(`.tjm-staging/${jobId}/${lostAttemptId}/`)).toBe(true);
    }
    // Destinations and manifest are the winner's, byte for byte.
    expect(await destinations()).toEqual(checksumsBefore);
    expect(await readObject(s3, manifestUri)).toEqual(manifestBefore);
    // The job is as the winner left it.
    expect(await manager.job(jobId)).toEqual(lost);
    // The zombie is back ONLINE and holds nothing the Manager knows of.
    const zombieId = zombie.logs.find((line) => line.msg === "worker registered")?.workerId as string;
    await waitForWorker(manager, zombieId, (w) => w.connectivity === "ONLINE", 20_000);
    const [held] = await manager.sql<{ count: number }[]>`
      select count(*)::int as count from attempts
      where worker_id = ${zombieId} and state in ('DISPATCHED', 'RUNNING', 'UPLOADING', 'WAITING_FOR_STORAGE')`;
    expect(held?.count).toBe(0);
    await rescuer.stop();
    await zombie.stop();
  }, 90_000);
});
