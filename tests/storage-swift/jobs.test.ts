/**
 * Real jobs on real agents with OpenStack Swift's s3api as the object store: the upload paths
 * s3rver cannot show (it has no ListParts, AbortMultipartUpload or ListMultipartUploads), each
 * checked the way one would check AWS S3, through its API and the proxy's access log.
 *
 * The Manager and the agents reach Swift through a TCP proxy the test can slow down: with
 * client-to-server bytes held to a few MiB/s, "in the middle of an upload" lasts seconds, so
 * acting in it does not depend on how fast this machine is. The clip is grainy on purpose: its
 * one output is about 30 MiB, seven 5 MiB parts.
 */
import { access, readdir } from "node:fs/promises";
import { join } from "node:path";
import { ListMultipartUploadsCommand, ListPartsCommand, type S3Client } from "@aws-sdk/client-s3";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createS3Client } from "../../worker-agent/storage/s3.ts";
import { MultipartUploader } from "../../worker-agent/storage/upload.ts";
import { readUploadState, type UploadState } from "../../worker-agent/storage/upload-state.ts";
import { type AgentProcess, agentDirs, killAgents, startAgent } from "../agent/agent-process.ts";
import { TestManager } from "../harness/manager.ts";
import { Freezer, listKeys, putClip, readObject, sha256, startTestAgent } from "../harness/media-jobs.ts";
import { waitFor } from "../harness/services.ts";
import { type SwiftServer, startSwift } from "../harness/swift/swift.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";

vi.setConfig({ testTimeout: 120_000 });

const MIB = 1024 * 1024;
const INPUT = "s3://media-in/grain.mp4";
/** Slow enough that a 30 MiB output takes about ten seconds to go up. */
const SLOW_UPLOAD_BYTES_PER_SECOND = 3 * MIB;
const LOST_AFTER_MS = 6_000;
const AGENT_SETTINGS = {
  WORKER_UPLOAD_PART_SIZE_MIB: "5",
  // Storage down for longer than this pauses the upload: WAITING_FOR_STORAGE.
  WORKER_UPLOAD_RETRY_BUDGET_MS: "2000",
};

let swift: SwiftServer;
let proxy: TcpProxy;
let admin: S3Client;
let manager: TestManager;
let projectId: string;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
const store = { client: () => admin };
const freezer = new Freezer();
let sequence = 0;

beforeAll(async () => {
  swift = await startSwift();
  admin = swift.client();
  for (const bucket of ["media-in", "media-out"]) await swift.createBucket(bucket);
  proxy = await TcpProxy.start({ host: "127.0.0.1", port: swift.port });
  manager = await TestManager.start({
    storage: { ...swift.settings, endpoint: `http://127.0.0.1:${proxy.port}` },
    heartbeatIntervalMs: 300,
    lostAfterMs: LOST_AFTER_MS,
    dispatchTimeoutMs: 15_000,
  });
  ({ projectId } = await manager.createProject());
  scratch = await agentDirs();
  await putClip(store, { bucket: "media-in", key: "grain.mp4" }, 10, "640x360", { noise: true });
}, 120_000);

afterEach(async () => {
  freezer.thawAll();
  proxy.limitUpload(undefined);
  await swift.startProxy();
  await killAgents();
});

afterAll(async () => {
  freezer.thawAll();
  await killAgents();
  await manager?.close();
  await proxy?.close();
  await swift?.stop();
  await scratch?.cleanup();
});

// biome-ignore lint/suspicious/noExplicitAny: tests read the job detail as JSON
type JobDetail = any;

async function job(jobId: string): Promise<JobDetail> {
  return (await manager.request(`/api/v1/operations/jobs/${jobId}`)).json();
}

async function until(jobId: string, state: string, timeoutMs = 60_000): Promise<JobDetail> {
  await waitFor(`job ${jobId} ${state}`, async () => (await job(jobId)).state === state, timeoutMs, 100);
  return job(jobId);
}

/** One grainy 360p H.264 output under s3://media-out/<prefix>/, with a manifest. */
async function submit(prefix: string): Promise<{ jobId: string; attemptId: string }> {
  const response = await manager.request("/api/v1/operations/jobs", {
    method: "POST",
    json: {
      projectId,
      executionPlan: {
        input: { uri: INPUT },
        outputs: [
          {
            id: "grain",
            kind: "FILE",
            container: "mp4",
            destinationUri: `s3://media-out/${prefix}/grain.mp4`,
            video: { codec: "h264", height: 360, preset: "fastest" },
            audio: { codec: "aac", bitrateKbps: 96 },
          },
        ],
        manifestUri: `s3://media-out/${prefix}/manifest.json`,
      },
    },
  });
  expect(response.status).toBe(201);
  const jobId = (await response.json()).id as string;
  return { jobId, attemptId: (await job(jobId)).currentAttemptId as string };
}

/** An agent of its own (state and work directories), with 5 MiB parts and a 2 s retry budget. */
async function agent(name: string): Promise<{ process: AgentProcess; workDir: string; stateDir: string }> {
  const unique = `${name}-${++sequence}`;
  const process = await startTestAgent(manager, scratch.root, unique, AGENT_SETTINGS);
  return {
    process,
    workDir: join(scratch.root, `work-${unique}`),
    stateDir: join(scratch.root, `state-${unique}`),
  };
}

const statePath = (workDir: string, attemptId: string) =>
  join(workDir, "attempts", `${attemptId}.grain.upload.json`);

/** The agent's upload state once it holds at least `parts` stored parts (the upload is under way). */
async function uploadUnderWay(workDir: string, attemptId: string, parts: number): Promise<UploadState> {
  let state: UploadState | undefined;
  await waitFor(
    `${parts} parts stored`,
    async () => {
      const read = await readUploadState(statePath(workDir, attemptId));
      if (read.status === "ok" && read.state.parts.length >= parts) state = read.state;
      return state !== undefined;
    },
    60_000,
    20,
  );
  if (!state) throw new Error("unreachable");
  expect(state.parts.length).toBeLessThan(Math.ceil(state.fileSize / state.partSize));
  return state;
}

async function incompleteUploads(): Promise<{ key: string | undefined; uploadId: string | undefined }[]> {
  const answer = await admin.send(new ListMultipartUploadsCommand({ Bucket: "media-out" }));
  return (answer.Uploads ?? []).map((upload) => ({ key: upload.Key, uploadId: upload.UploadId }));
}

/** Part numbers the proxy stored (2xx) for one multipart upload, from its access log, in order. */
async function storedPartPuts(uploadId: string): Promise<number[]> {
  const log = await swift.proxyLog();
  const parts: number[] = [];
  for (const line of log.split("\n")) {
    const match = /PUT \S*%3FpartNumber%3D(\d+)%26uploadId%3D([^%\s]+)\S* HTTP\/1\.\d (\d{3})/.exec(line);
    if (match && decodeURIComponent(match[2] ?? "") === uploadId && match[3]?.startsWith("2")) {
      parts.push(Number(match[1]));
    }
  }
  return parts;
}

/** The job's outputs as the manifest lists them, each read back and checked against it. */
async function expectDelivered(jobId: string, prefix: string, attemptId: string) {
  const manifest = JSON.parse((await readObject(store, `s3://media-out/${prefix}/manifest.json`)).toString());
  expect(manifest).toMatchObject({ jobId, attemptId });
  const [output] = manifest.outputs as { uri: string; sha256: string; bytes: number }[];
  const bytes = await readObject(store, output?.uri ?? "");
  expect(bytes.length).toBe(output?.bytes);
  expect(await sha256(bytes)).toBe(output?.sha256);
  // Exactly one object per output (and the manifest); nothing staged, nothing half-uploaded.
  expect(await listKeys(store, "media-out", `${prefix}/`)).toEqual([
    `${prefix}/grain.mp4`,
    `${prefix}/manifest.json`,
  ]);
  expect(await listKeys(store, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);
  expect(await incompleteUploads()).toEqual([]);
  return { manifest, bytes };
}

describe("jobs on Swift s3api", () => {
  it("a Worker killed mid-upload comes back and continues the same multipart upload: no part goes up twice", async () => {
    const first = await agent("restarted");
    proxy.limitUpload(SLOW_UPLOAD_BYTES_PER_SECOND);
    const { jobId, attemptId } = await submit("restart");
    const before = await uploadUnderWay(first.workDir, attemptId, 2);
    expect(await first.process.stop("SIGKILL")).toMatchObject({ signal: "SIGKILL" });

    // What the store kept of the interrupted upload: at least the parts the state recorded.
    const kept = await admin.send(
      new ListPartsCommand({ Bucket: "media-out", Key: before.key, UploadId: before.uploadId }),
    );
    const keptNumbers = (kept.Parts ?? []).map((part) => part.PartNumber);
    expect(keptNumbers).toEqual(expect.arrayContaining(before.parts.map((part) => part.PartNumber)));
    expect(await incompleteUploads()).toEqual([{ key: before.key, uploadId: before.uploadId }]);

    // The same host again: no token, the same state and work directories.
    proxy.limitUpload(undefined);
    const second = startAgent({
      MANAGER_URL: manager.baseUrl,
      WORKER_STATE_DIR: first.stateDir,
      WORKER_WORK_DIR: first.workDir,
      WORKER_CAPACITY: "1",
      LOG_LEVEL: "debug",
      ...AGENT_SETTINGS,
    });
    await second.waitForMessage("worker re-registered", 30_000);
    const done = await until(jobId, "COMPLETED");
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0]).toMatchObject({ id: attemptId, state: "SUCCEEDED", encodingRecoveryCount: 0 });
    const resumed = second.logs.find((line) => line.msg === "resuming multipart upload");
    expect(resumed).toMatchObject({ uploadId: before.uploadId, partsLost: 0 });
    expect(resumed?.partsStored).toBeGreaterThanOrEqual(before.parts.length);
    expect(second.logs.filter((line) => line.msg === "encoding")).toEqual([]);

    // Every part stored once: the new instance sent only the ones the store did not hold.
    const puts = await storedPartPuts(before.uploadId);
    const partCount = Math.ceil(before.fileSize / before.partSize);
    expect([...puts].sort((a, b) => a - b)).toEqual(Array.from({ length: partCount }, (_, i) => i + 1));
    const { bytes } = await expectDelivered(jobId, "restart", attemptId);
    expect(bytes.length).toBe(before.fileSize);
    await second.stop();
  });

  it("cancel during an upload aborts the multipart upload: none listed, no object anywhere", async () => {
    const worker = await agent("cancelled");
    proxy.limitUpload(SLOW_UPLOAD_BYTES_PER_SECOND);
    const { jobId, attemptId } = await submit("cancel");
    const during = await uploadUnderWay(worker.workDir, attemptId, 1);
    expect(await incompleteUploads()).toEqual([{ key: during.key, uploadId: during.uploadId }]);

    const response = await manager.request(`/api/v1/operations/jobs/${jobId}/cancel`, { method: "POST" });
    expect(response.status).toBe(202);
    await until(jobId, "CANCELLED");
    await worker.process.waitForLog(
      (line) => line.msg === "attempt cancelled" && line.attemptId === attemptId,
    );
    expect(await incompleteUploads()).toEqual([]);
    expect(await listKeys(store, "media-out", "cancel/")).toEqual([]);
    expect(await listKeys(store, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);
    // The Worker kept nothing either: no output, no record, no upload state.
    await expect(access(join(worker.workDir, attemptId))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readdir(join(worker.workDir, "attempts"))).toEqual([]);
    await worker.process.stop();
  });

  it("storage killed mid-upload: WAITING_FOR_STORAGE; back and resumed, COMPLETED without re-encoding, one object, no upload left", async () => {
    const worker = await agent("outage");
    proxy.limitUpload(SLOW_UPLOAD_BYTES_PER_SECOND);
    const { jobId, attemptId } = await submit("outage");
    const during = await uploadUnderWay(worker.workDir, attemptId, 1);
    await swift.killProxy();
    const waiting = await until(jobId, "WAITING_FOR_STORAGE");
    expect(waiting.attempts[0]).toMatchObject({ id: attemptId, state: "WAITING_FOR_STORAGE" });

    proxy.limitUpload(undefined);
    await swift.startProxy();
    // Storage being back does not by itself resume: an operator (or the tenant) asks.
    expect((await job(jobId)).state).toBe("WAITING_FOR_STORAGE");
    const resumed = await manager.request(`/api/v1/operations/jobs/${jobId}/resume-uploads`, {
      method: "POST",
    });
    expect(resumed.status).toBe(202);
    const done = await until(jobId, "COMPLETED");
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0]).toMatchObject({ encodingRecoveryCount: 0, uploadRecoveryCount: 1 });
    expect(
      worker.process.logs.filter((line) => line.msg === "encoding" && line.attemptId === attemptId),
    ).toHaveLength(1);
    // The upload that was under way when storage died was continued, not begun again.
    expect(worker.process.logs.find((line) => line.msg === "resuming multipart upload")).toMatchObject({
      uploadId: during.uploadId,
    });
    await expectDelivered(jobId, "outage", attemptId);
    await worker.process.stop();
  });

  it("retention expiry of a waiting job: the Worker deletes its outputs and aborts the upload; FAILED UPLOAD_RETENTION_EXPIRED", async () => {
    const worker = await agent("expired");
    proxy.limitUpload(SLOW_UPLOAD_BYTES_PER_SECOND);
    const { jobId, attemptId } = await submit("expired");
    const during = await uploadUnderWay(worker.workDir, attemptId, 1);
    await swift.killProxy();
    await until(jobId, "WAITING_FOR_STORAGE");
    // The encoded output waits on the Worker's disk.
    const attemptDirectory = join(worker.workDir, attemptId);
    await access(attemptDirectory);
    // Storage came back, but nobody asked to resume before the retention ran out.
    proxy.limitUpload(undefined);
    await swift.startProxy();
    expect(await incompleteUploads()).toEqual([{ key: during.key, uploadId: during.uploadId }]);
    await manager.sql`update attempts set upload_pause_expires_at = now() where id = ${attemptId}`;

    const failed = await until(jobId, "FAILED");
    expect(failed.attempts).toEqual([
      expect.objectContaining({ id: attemptId, state: "FAILED", failureCode: "UPLOAD_RETENTION_EXPIRED" }),
    ]);
    await worker.process.waitForLog(
      (line) => line.msg === "attempt cancelled" && line.attemptId === attemptId,
    );
    expect(await incompleteUploads()).toEqual([]);
    expect(await listKeys(store, "media-out", "expired/")).toEqual([]);
    expect(await listKeys(store, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);
    await expect(access(attemptDirectory)).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readdir(join(worker.workDir, "attempts"))).toEqual([]);
    await worker.process.stop();
  });

  it("a zombie's late CompleteMultipartUpload lands under its own staging key and cannot replace the winner's object", async () => {
    const zombie = await agent("zombie");
    proxy.limitUpload(SLOW_UPLOAD_BYTES_PER_SECOND);
    const { jobId, attemptId: lostAttemptId } = await submit("zombie");
    const during = await uploadUnderWay(zombie.workDir, lostAttemptId, 1);
    // The whole host hangs mid-upload; the Manager declares it lost and the next attempt runs elsewhere.
    freezer.freeze(zombie.process.child.pid as number);
    proxy.limitUpload(undefined);
    const rescuer = await agent("rescuer");
    const done = await until(jobId, "COMPLETED");
    expect(done.attempts.map((a: { id: string; state: string }) => [a.id, a.state])).toEqual([
      [lostAttemptId, "FAILED"],
      [done.attempts[1].id, "SUCCEEDED"],
    ]);
    const winner = done.attempts[1].id as string;
    const { manifest, bytes: winnerBytes } = await expectDeliveredExceptZombie(jobId, "zombie", winner);

    // The zombie's upload finishes late, with the zombie's own uploader and state file: the
    // multipart upload it began for the lost attempt is completed now, after the winner's
    // promotion. Its key is the lost attempt's staging key, fixed by its lease.
    expect(during.key.startsWith(`.tjm-staging/${jobId}/${lostAttemptId}/`)).toBe(true);
    const lateClient = createS3Client(swift.settings);
    const late = await new MultipartUploader({
      client: lateClient,
      file: join(zombie.workDir, lostAttemptId, "output-grain.mp4"),
      uri: `s3://media-out/${during.key}`,
      statePath: statePath(zombie.workDir, lostAttemptId),
    }).upload();
    lateClient.destroy();
    expect(late.partsResumed).toBeGreaterThanOrEqual(1);
    expect(await listKeys(store, "media-out", `.tjm-staging/${jobId}/`)).toEqual([during.key]);
    // The destination and the manifest are still the winner's, byte for byte.
    const destination = await readObject(store, manifest.outputs[0].uri);
    expect(await sha256(destination)).toBe(await sha256(winnerBytes));
    expect(JSON.parse((await readObject(store, "s3://media-out/zombie/manifest.json")).toString())).toEqual(
      manifest,
    );

    // Thawed, the zombie finds the cancel the Manager queued for it; whatever it reports is stale.
    const staleBefore = manager.manager.execution.reports.counters.stale["not-current-attempt"] ?? 0;
    freezer.thaw(zombie.process.child.pid as number);
    await zombie.process.waitForLog(
      (line) => line.attemptId === lostAttemptId && /^attempt (cancelled|completed)$/.test(line.msg),
      30_000,
    );
    await waitFor(
      "the zombie's reports counted as stale",
      async () =>
        (manager.manager.execution.reports.counters.stale["not-current-attempt"] ?? 0) > staleBefore,
      15_000,
      50,
    );
    expect(await job(jobId)).toEqual(done);
    expect(await sha256(await readObject(store, manifest.outputs[0].uri))).toBe(await sha256(winnerBytes));
    expect(await incompleteUploads()).toEqual([]);
    await rescuer.process.stop();
    await zombie.process.stop();
  });
});

/** As expectDelivered, but the frozen zombie's upload is still incomplete in the bucket. */
async function expectDeliveredExceptZombie(jobId: string, prefix: string, attemptId: string) {
  const manifest = JSON.parse((await readObject(store, `s3://media-out/${prefix}/manifest.json`)).toString());
  expect(manifest).toMatchObject({ jobId, attemptId, attemptNumber: 2 });
  const bytes = await readObject(store, manifest.outputs[0].uri);
  expect(await sha256(bytes)).toBe(manifest.outputs[0].sha256);
  expect(await listKeys(store, "media-out", `${prefix}/`)).toEqual([
    `${prefix}/grain.mp4`,
    `${prefix}/manifest.json`,
  ]);
  return { manifest, bytes };
}
