/**
 * Real jobs on real agents with OpenStack Swift's s3api as the object store, for the
 * tests/storage-swift/jobs-*.test.ts files: each file gets its own Swift, Manager, agents and
 * TCP proxy, and checks what s3rver cannot show (it has no ListParts, AbortMultipartUpload or
 * ListMultipartUploads) the way one would check AWS S3, through its API and the proxy's log.
 *
 * The Manager and the agents reach Swift through a TCP proxy the test can slow down: with
 * client-to-server bytes held to a few MiB/s, "in the middle of an upload" lasts seconds, so
 * acting in it does not depend on how fast this machine is. The clip is grainy on purpose: its
 * one output is about 30 MiB, seven 5 MiB parts.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ListMultipartUploadsCommand, type S3Client } from "@aws-sdk/client-s3";
import { type AgentProcess, agentDirs, killAgents, startAgent } from "@tjm/devstack/agent-process";
import { waitFor } from "@tjm/devstack/services";
import { type SwiftServer, startSwift } from "@tjm/devstack/swift";
import type { OutputCommit } from "@tjm/protocol";
import { afterAll, afterEach, beforeAll, expect, vi } from "vitest";
import { readUploadState, type UploadState } from "../../worker-agent/src/storage/upload-state.ts";
import { type JobDetail, TestManager } from "../harness/manager.ts";
import { Freezer, listKeys, putClip, readObject, sha256, startTestAgent } from "../harness/media-jobs.ts";
import { TcpProxy } from "../harness/tcp-proxy.ts";

const MIB = 1024 * 1024;
const INPUT = "s3://media-in/grain.mp4";
/** Slow enough that a 30 MiB output takes about ten seconds to go up. */
export const SLOW_UPLOAD_BYTES_PER_SECOND = 3 * MIB;
export const AGENT_SETTINGS = {
  WORKER_UPLOAD_PART_SIZE_MIB: "5",
  // Two parts at a time, not all seven at once: "some parts stored, not all" lasts seconds.
  WORKER_UPLOAD_CONCURRENCY: "2",
  // Storage down for longer than this pauses the upload: WAITING_FOR_STORAGE.
  WORKER_UPLOAD_RETRY_BUDGET_MS: "2000",
};

export let swift: SwiftServer;
export let proxy: TcpProxy;
let admin: S3Client;
export let manager: TestManager;
let projectId: string;
let scratch: Awaited<ReturnType<typeof agentDirs>>;
export const store = { client: () => admin };
export const adminClient = (): S3Client => admin;
export const freezer = new Freezer();
let sequence = 0;

/**
 * Registers the file's hooks: Swift, proxy, Manager and clip before, clean-up after each test
 * and at the end. `commit`: the Manager's S3_COMMIT (copy by default).
 */
export function useSwiftJobs(options: { lostAfterMs: number; commit?: OutputCommit }): void {
  vi.setConfig({ testTimeout: 120_000 });

  beforeAll(async () => {
    swift = await startSwift();
    admin = swift.client();
    for (const bucket of ["media-in", "media-out"]) await swift.createBucket(bucket);
    proxy = await TcpProxy.start({ host: "127.0.0.1", port: swift.port });
    manager = await TestManager.start({
      storage: { ...swift.settings, endpoint: `http://127.0.0.1:${proxy.port}` },
      heartbeatIntervalMs: 300,
      lostAfterMs: options.lostAfterMs,
      dispatchTimeoutMs: 15_000,
      env: { S3_COMMIT: options.commit ?? "copy" },
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
}

/** The file's Manager's view of a job (the Manager is started in useSwiftJobs' beforeAll). */
export const job = (jobId: string): Promise<JobDetail> => manager.job(jobId);

/** Real encodes and uploads: a minute unless a test says otherwise. */
export const until = (jobId: string, state: string, timeoutMs = 60_000): Promise<JobDetail> =>
  manager.untilJob(jobId, state, { timeoutMs, pollMs: 100 });

/**
 * One grainy 360p H.264 output under s3://media-out/<prefix>/, with a manifest: a faststart
 * mp4 unless `output` says otherwise.
 */
export async function submit(
  prefix: string,
  output: { container: "mp4" | "mpegts"; preset: "fastest" | "medium" } = {
    container: "mp4",
    preset: "fastest",
  },
): Promise<{ jobId: string; attemptId: string }> {
  const jobId = await manager.submitJob({
    projectId,
    executionPlan: {
      input: { uri: INPUT },
      outputs: [
        {
          id: "grain",
          kind: "FILE",
          container: output.container,
          destinationUri: `s3://media-out/${prefix}/grain.${output.container === "mp4" ? "mp4" : "ts"}`,
          video: { codec: "h264", height: 360, preset: output.preset },
          audio: { codec: "aac", bitrateKbps: 96 },
        },
      ],
      manifestUri: `s3://media-out/${prefix}/manifest.json`,
    },
  });
  return { jobId, attemptId: (await job(jobId)).currentAttemptId as string };
}

/** An agent of its own (state and work directories), with 5 MiB parts and a 2 s retry budget. */
export async function agent(
  name: string,
  settings: Record<string, string> = {},
): Promise<{ process: AgentProcess; workDir: string; stateDir: string }> {
  const unique = `${name}-${++sequence}`;
  const started = await startTestAgent(manager, scratch.root, unique, { ...AGENT_SETTINGS, ...settings });
  return {
    process: started,
    workDir: join(scratch.root, `work-${unique}`),
    stateDir: join(scratch.root, `state-${unique}`),
  };
}

/** The same host started again: no enrollment token, `first`'s state and work directories. */
export function restartAgent(
  first: { workDir: string; stateDir: string },
  settings: Record<string, string> = {},
): AgentProcess {
  return startAgent({
    MANAGER_URL: manager.baseUrl,
    WORKER_STATE_DIR: first.stateDir,
    WORKER_WORK_DIR: first.workDir,
    WORKER_CAPACITY: "1",
    ...settings,
    ...AGENT_SETTINGS,
  });
}

export const statePath = (workDir: string, attemptId: string) =>
  join(workDir, "attempts", `${attemptId}.grain.upload.json`);

/**
 * The agent's upload state once it holds at least `parts` stored parts after the encode (the
 * upload is under way; one begun while the output was written has been checked against it).
 */
async function uploadUnderWay(workDir: string, attemptId: string, parts: number): Promise<UploadState> {
  let state: UploadState | undefined;
  const phase = async () =>
    readFile(join(workDir, "attempts", `${attemptId}.json`), "utf8").then(
      (text) => (JSON.parse(text) as { phase?: string }).phase,
      () => undefined,
    );
  await waitFor(
    `${parts} parts stored`,
    async () => {
      const read = await readUploadState(statePath(workDir, attemptId));
      // The upload state stops growing a moment before the attempt's record says `uploading`;
      // a Worker killed in between restarts an attempt that was still encoding.
      if (
        read.status === "ok" &&
        !read.state.growing &&
        read.state.parts.length >= parts &&
        (await phase()) === "uploading"
      )
        state = read.state;
      return state !== undefined;
    },
    60_000,
    20,
  );
  if (!state) throw new Error("unreachable");
  expect(state.parts.length).toBeLessThan(Math.ceil(state.fileSize / state.partSize));
  return state;
}

/**
 * A fresh agent, the upload slowed down, a job submitted, and the agent's upload of its output
 * under way after the encode with at least `parts` parts stored.
 */
export async function jobMidUpload(
  name: string,
  prefix: string,
  parts = 1,
  container: "mp4" | "mpegts" = "mp4",
) {
  const worker = await agent(name);
  proxy.limitUpload(SLOW_UPLOAD_BYTES_PER_SECOND);
  const { jobId, attemptId } = await submit(prefix, { container, preset: "fastest" });
  const during = await uploadUnderWay(worker.workDir, attemptId, parts);
  return { worker, jobId, attemptId, during };
}

export async function incompleteUploads(): Promise<
  { key: string | undefined; uploadId: string | undefined }[]
> {
  const answer = await admin.send(new ListMultipartUploadsCommand({ Bucket: "media-out" }));
  return (answer.Uploads ?? []).map((upload) => ({ key: upload.Key, uploadId: upload.UploadId }));
}

/** Part numbers the proxy stored (2xx) for one multipart upload, from its access log, in order. */
export async function storedPartPuts(uploadId: string): Promise<number[]> {
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
export async function expectDelivered(jobId: string, prefix: string, attemptId: string, file = "grain.mp4") {
  const manifest = JSON.parse((await readObject(store, `s3://media-out/${prefix}/manifest.json`)).toString());
  expect(manifest).toMatchObject({ jobId, attemptId });
  const [output] = manifest.outputs as { uri: string; sha256: string; bytes: number }[];
  const bytes = await readObject(store, output?.uri ?? "");
  expect(bytes.length).toBe(output?.bytes);
  expect(await sha256(bytes)).toBe(output?.sha256);
  // Exactly one object per output (and the manifest); nothing staged, nothing half-uploaded.
  expect(await listKeys(store, "media-out", `${prefix}/`)).toEqual([
    `${prefix}/${file}`,
    `${prefix}/manifest.json`,
  ]);
  expect(await listKeys(store, "media-out", `.tjm-staging/${jobId}/`)).toEqual([]);
  expect(await incompleteUploads()).toEqual([]);
  return { manifest, bytes };
}

/** As expectDelivered, but the frozen zombie's upload is still incomplete in the bucket. */
export async function expectDeliveredExceptZombie(jobId: string, prefix: string, attemptId: string) {
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
