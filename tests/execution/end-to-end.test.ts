/**
 * Jobs end to end on real processes: the Manager (in-process, on real PostgreSQL and NATS),
 * Worker agents on Bun running real ffmpeg, and an S3-compatible server (s3rver) behind a
 * proxy the test can cut to take storage away.
 */
import { execFile } from "node:child_process";
import { readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { waitFor } from "@tjm/devstack/services";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TestManager } from "../harness/manager.ts";
import {
  listKeys,
  putClip,
  readObject,
  sha256,
  startTestAgent,
  twoOutputPlan,
} from "../harness/media-jobs.ts";
import { subscribeEvents } from "../harness/sse.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";

const run = promisify(execFile);

// Real encodes share two cores with every other test file: generous, not tight, limits.
vi.setConfig({ testTimeout: 120_000 });

let s3: S3Server;
let proxy: TcpProxy;
let manager: TestManager;
let projectId: string;
let scratch: Awaited<ReturnType<typeof agentDirs>>;

beforeAll(async () => {
  s3 = await startS3({ buckets: ["media-in", "media-out"] });
  proxy = await TcpProxy.start({ host: "127.0.0.1", port: s3.port });
  manager = await TestManager.start({
    storage: { ...s3.settings, endpoint: `http://127.0.0.1:${proxy.port}` },
    heartbeatIntervalMs: 300,
    lostAfterMs: 2000,
    dispatchTimeoutMs: 10_000,
  });
  ({ projectId } = await manager.createProject());
  scratch = await agentDirs();
  // A short clip (quick jobs) and a longer one (still encoding when a test interrupts it).
  await putClip(s3, { bucket: "media-in", key: "short.mp4" }, 4, "320x240");
  await putClip(s3, { bucket: "media-in", key: "long.mp4" }, 30, "640x360");
  await s3
    .client()
    .send(new PutObjectCommand({ Bucket: "media-in", Key: "not-media.mp4", Body: "this is not a video" }));
}, 120_000);

afterAll(async () => {
  await killAgents();
  await manager?.close();
  await proxy?.close();
  await s3?.stop();
  await scratch?.cleanup();
});

let agentCount = 0;

/** A fresh agent named e2e-<n>, its directories state-e2e-<n> and work-e2e-<n> under the scratch root. */
function worker(extra: Record<string, string> = {}): Promise<AgentProcess> {
  return startTestAgent(manager, scratch.root, `e2e-${++agentCount}`, {
    WORKER_UPLOAD_RETRY_BUDGET_MS: "1500",
    WORKER_UPLOAD_RETRY_ATTEMPTS: "2",
    ...extra,
  });
}

/** The shared two-output plan, with one second (1–2 s) cut out. */
const plan = (input: string, prefix: string) => ({
  ...twoOutputPlan(`s3://media-in/${input}`, prefix),
  transforms: { removedSegments: [{ startMs: 1000, endMs: 2000 }] },
});

const submit = (executionPlan: unknown) => manager.submitJob({ projectId, executionPlan });

/** Jobs here run real encodes: a minute unless a test says otherwise. */
const until = (jobId: string, state: string, timeoutMs = 60_000) =>
  manager.untilJob(jobId, state, { timeoutMs, pollMs: 100 });

async function ffprobe(bytes: Buffer) {
  const path = join(tmpdir(), `tjm-e2e-probe-${crypto.randomUUID()}`);
  await writeFile(path, bytes);
  const { stdout } = await run("ffprobe", [
    "-v",
    "error",
    "-print_format",
    "json",
    "-show_format",
    "-show_streams",
    path,
  ]).finally(() => rm(path, { force: true }));
  return JSON.parse(stdout) as {
    format: { duration: string };
    streams: { codec_type: string; codec_name: string; height?: number; width?: number }[];
  };
}

describe("a job from submit to outputs in S3", () => {
  let agent: AgentProcess;
  beforeAll(async () => {
    // Inputs downloaded, not streamed: the outage test below cuts storage while ffmpeg encodes
    // and needs the input already local (a streamed read would fail and fall back to a
    // download against the dead store). The agents of "interruptions" stream theirs.
    agent = await worker({ WORKER_INPUT_STREAMING: "off" });
  }, 60_000);
  afterAll(async () => {
    await agent.stop();
  });

  it("runs on a real Worker: outputs at their destinations, manifest, logs, progress, COMPLETED", async () => {
    const events = await subscribeEvents(manager);
    try {
      await happyPath(events);
    } finally {
      await events.close();
    }
  });

  async function happyPath(events: Awaited<ReturnType<typeof subscribeEvents>>) {
    const jobId = await submit(plan("short.mp4", "happy"));
    const done = await until(jobId, "COMPLETED");
    expect(done.completedAt).not.toBeNull();
    expect(done.currentAttempt.state).toBe("SUCCEEDED");
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0].logsUri).toBe(`s3://media-out/.tjm-logs/${jobId}/attempt-1.log`);
    // The attempt's ffmpeg log (its stderr) is in S3.
    expect((await readObject(s3, done.attempts[0].logsUri)).toString()).toContain("Input #0");

    const small = await readObject(s3, "s3://media-out/happy/small.mp4");
    const web = await readObject(s3, "s3://media-out/happy/web.webm");
    const smallInfo = await ffprobe(small);
    const webInfo = await ffprobe(web);
    // 4 s less the removed second.
    expect(Number(smallInfo.format.duration)).toBeCloseTo(3, 0);
    expect(Math.abs(Number(smallInfo.format.duration) - 3)).toBeLessThanOrEqual(0.15);
    expect(Math.abs(Number(webInfo.format.duration) - 3)).toBeLessThanOrEqual(0.15);
    expect(smallInfo.streams.map((s) => [s.codec_type, s.codec_name, s.height])).toEqual([
      ["video", "h264", 180],
      ["audio", "aac", undefined],
    ]);
    expect(smallInfo.streams[0]?.width).toBe(240);
    expect(webInfo.streams.map((s) => [s.codec_type, s.codec_name, s.height])).toEqual([
      ["video", "vp9", 144],
      ["audio", "opus", undefined],
    ]);

    const manifest = JSON.parse((await readObject(s3, "s3://media-out/happy/manifest.json")).toString());
    expect(manifest).toMatchObject({ jobId, attemptNumber: 1 });
    expect(manifest.outputs).toEqual([
      expect.objectContaining({
        id: "small",
        uri: "s3://media-out/happy/small.mp4",
        bytes: small.length,
        sha256: await sha256(small),
      }),
      expect.objectContaining({
        id: "web",
        uri: "s3://media-out/happy/web.webm",
        bytes: web.length,
        sha256: await sha256(web),
      }),
    ]);
    expect(manifest.outputs[0].codecs).toEqual(["h264", "aac"]);
    // Staging objects are gone once promoted.
    expect(await listKeys(s3, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);

    await waitFor("job events", async () =>
      events.events().some((e) => e.event === "job.updated" && e.data?.includes("COMPLETED")),
    );
    const kinds = events
      .events()
      .filter((e) => e.data?.includes(jobId))
      .map((e) => e.event);
    expect(kinds).toContain("job.progress");
    expect(kinds.at(-1)).toBe("job.updated");
    // The agent cleaned its workspace.
    expect(await readdir(join(scratch.root, "work-e2e-1", "attempts")).catch(() => [])).toEqual([]);
  }

  it("a fragmented mp4 and an MPEG-TS output upload while encoding and arrive whole", async () => {
    const output = (id: string, container: string, extra: Record<string, unknown> = {}) => ({
      id,
      kind: "FILE",
      container,
      destinationUri: `s3://media-out/streamed/${id}.${container === "mpegts" ? "ts" : container}`,
      video: { codec: "h264", height: 180, preset: "fastest" },
      audio: { codec: "aac", bitrateKbps: 64 },
      ...extra,
    });
    const jobId = await submit({
      input: { uri: "s3://media-in/short.mp4" },
      outputs: [output("fragmented", "mp4", { fragmented: true }), output("ts", "mpegts")],
      manifestUri: "s3://media-out/streamed/manifest.json",
    });
    const done = await until(jobId, "COMPLETED");
    const attemptId = done.attempts[0].id;
    const checked = agent.logs.filter(
      (line) => line.msg === "parts uploaded while the output was written" && line.attemptId === attemptId,
    );
    expect(checked).toHaveLength(2);
    const manifest = JSON.parse((await readObject(s3, "s3://media-out/streamed/manifest.json")).toString());
    for (const entry of manifest.outputs as { uri: string; bytes: number; sha256: string }[]) {
      const bytes = await readObject(s3, entry.uri);
      expect(bytes.length).toBe(entry.bytes);
      expect(await sha256(bytes)).toBe(entry.sha256);
      expect(Math.abs(Number((await ffprobe(bytes)).format.duration) - 4)).toBeLessThanOrEqual(0.15);
    }
    // Fragments (moof boxes), and the stored plan keeps the option.
    const fragmented = await readObject(s3, "s3://media-out/streamed/fragmented.mp4");
    expect(fragmented.includes("moof")).toBe(true);
    expect(done.executionPlan.outputs[0]).toMatchObject({ container: "mp4", fragmented: true });
  });

  it("a missing input fails the job at once with INPUT_NOT_FOUND; no retry loop", async () => {
    const jobId = await submit(plan("nothing-here.mp4", "missing"));
    const failed = await until(jobId, "FAILED");
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0]).toMatchObject({ failureCode: "INPUT_NOT_FOUND" });
    expect(failed.attempts[0].failureMessage).toContain("s3://media-in/nothing-here.mp4");
  });

  it("retry of that FAILED job, once the input exists, encodes from scratch and completes", async () => {
    const jobId = await submit(plan("arrives-late.mp4", "retried"));
    await until(jobId, "FAILED");
    await s3.client().send(
      new PutObjectCommand({
        Bucket: "media-in",
        Key: "arrives-late.mp4",
        Body: await readObject(s3, "s3://media-in/short.mp4"),
      }),
    );
    const retried = await manager.request(`/api/v1/operations/jobs/${jobId}/retry`, { method: "POST" });
    expect(retried.status).toBe(202);
    const done = await until(jobId, "COMPLETED");
    expect(
      done.attempts.map((a: { state: string; failureCode: string | null }) => [a.state, a.failureCode]),
    ).toEqual([
      ["FAILED", "INPUT_NOT_FOUND"],
      ["SUCCEEDED", null],
    ]);
  });

  it("a destination bucket that does not exist fails the job at once with STORAGE_BUCKET_NOT_FOUND", async () => {
    const executionPlan = plan("short.mp4", "nowhere");
    for (const output of executionPlan.outputs)
      output.destinationUri = output.destinationUri.replace("media-out", "no-such-bucket");
    executionPlan.manifestUri = "s3://no-such-bucket/nowhere/manifest.json";
    const jobId = await submit(executionPlan);
    const failed = await until(jobId, "FAILED");
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0].failureCode).toBe("STORAGE_BUCKET_NOT_FOUND");
    expect(failed.attempts[0].failureMessage).toContain("no-such-bucket");
  });

  it("an input that is not media fails with INPUT_UNREADABLE", async () => {
    const jobId = await submit(plan("not-media.mp4", "unreadable"));
    const failed = await until(jobId, "FAILED");
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0].failureCode).toBe("INPUT_UNREADABLE");
  });

  it("storage down during upload: WAITING_FOR_STORAGE, then resume-uploads completes it without re-encoding", async () => {
    // The long clip: storage goes away while ffmpeg still encodes, so the uploads find it down.
    const jobId = await submit(plan("long.mp4", "outage"));
    const attemptId = (await manager.job(jobId)).currentAttemptId;
    await agent.waitForLog((line) => line.msg === "encoding" && line.attemptId === attemptId, 60_000);
    await proxy.cut();
    const waiting = await until(jobId, "WAITING_FOR_STORAGE", 60_000);
    expect(waiting.attempts.at(-1)).toMatchObject({
      state: "WAITING_FOR_STORAGE",
      uploadResumeRequestedAt: null,
    });
    const pausedAt = Date.parse(waiting.attempts.at(-1).uploadPausedAt);
    expect(Date.parse(waiting.attempts.at(-1).uploadPauseExpiresAt) - pausedAt).toBe(24 * 3600 * 1000);
    const tooEarly = await manager.request(`/api/v1/operations/jobs/${crypto.randomUUID()}/resume-uploads`, {
      method: "POST",
    });
    expect(tooEarly.status).toBe(404);

    await proxy.restore();
    const resumed = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
      method: "POST",
    });
    expect(resumed.status).toBe(202);
    const body = await resumed.json();
    expect(body.attempts.at(-1).uploadResumeRequestedAt).not.toBeNull();
    const done = await until(jobId, "COMPLETED");
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0]).toMatchObject({ encodingRecoveryCount: 0, uploadRecoveryCount: 1 });
    const again = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
      method: "POST",
    });
    expect(again.status).toBe(409);
    const manifest = JSON.parse((await readObject(s3, "s3://media-out/outage/manifest.json")).toString());
    const small = await readObject(s3, "s3://media-out/outage/small.mp4");
    expect(manifest.outputs[0].sha256).toBe(await sha256(small));
    // One encode: the agent logged a single ffmpeg run for this attempt.
    expect(
      agent.logs.filter((line) => line.msg === "encoding" && line.attemptId === done.attempts[0].id),
    ).toHaveLength(1);
  });
});

describe("interruptions", () => {
  it("progress and Worker statistics while encoding; cancel stops ffmpeg, removes the workspace, CANCELLED", async () => {
    const agent = await worker();
    try {
      const jobId = await submit(plan("long.mp4", "cancelled"));
      const attemptId = (await manager.job(jobId)).currentAttemptId;
      await agent.waitForLog((line) => line.msg === "encoding" && line.attemptId === attemptId, 60_000);
      // Live figures while it encodes: the job's progress and the Worker's statistics.
      const { workerId } = await agent.waitForMessage("worker registered");
      await waitFor(
        "live progress",
        async () => {
          const progress = (await manager.job(jobId)).currentAttempt.progress;
          const shown = await (await manager.request(`/api/v1/operations/workers/${workerId}`)).json();
          return (
            typeof progress === "number" &&
            progress > 0 &&
            progress < 100 &&
            shown.statistics.some(
              (s: { attemptId: string; fps: number | null }) => s.attemptId === attemptId && s.fps !== null,
            )
          );
        },
        30_000,
        50,
      );
      const response = await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
      expect((await response.json()).state).toBe("CANCEL_REQUESTED");
      await until(jobId, "CANCELLED");
      await agent.waitForLog((line) => line.msg === "attempt cancelled" && line.attemptId === attemptId);
      expect(await listKeys(s3, "media-out", "cancelled/")).toEqual([]);
      expect(await listKeys(s3, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);
    } finally {
      await agent.stop();
    }
  });

  it("kill -9 of the Worker mid-encode: WORKER_LOST, and another Worker completes the next attempt", async () => {
    const doomed = await worker();
    const jobId = await submit(plan("long.mp4", "rescued"));
    const attemptId = (await manager.job(jobId)).currentAttemptId;
    const encoding = await doomed.waitForLog(
      (line) => line.msg === "encoding" && line.attemptId === attemptId,
      60_000,
    );
    // The whole host goes: the agent and its ffmpeg.
    await doomed.stop("SIGKILL");
    process.kill(encoding.pid as number, "SIGKILL");
    const rescuer = await worker();
    try {
      const done = await until(jobId, "COMPLETED", 90_000);
      expect(
        done.attempts.map((a: { state: string; failureCode: string | null }) => [a.state, a.failureCode]),
      ).toEqual([
        ["FAILED", "WORKER_LOST"],
        ["SUCCEEDED", null],
      ]);
      const small = await ffprobe(await readObject(s3, "s3://media-out/rescued/small.mp4"));
      expect(Math.abs(Number(small.format.duration) - 29)).toBeLessThanOrEqual(0.15);
    } finally {
      await rescuer.stop();
    }
  });
});
