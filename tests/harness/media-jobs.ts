/**
 * What tests running real jobs on real agents share: test clips in object storage (s3rver or
 * Swift), a two-output
 * execution plan with a manifest, reading objects back, agents with their own directories,
 * and freezing a process (SIGSTOP) the test must thaw again whatever happens.
 */
import { execFile } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { type AgentProcess, startAgent } from "@tjm/devstack/agent-process";
import type { TestManager } from "./manager.ts";
import { issueToken } from "./workers.ts";

const run = promisify(execFile);

/** Where tests keep objects: s3rver (@tjm/devstack/s3rver) or Swift (@tjm/devstack/swift). */
export interface ObjectStore {
  client(): S3Client;
}

/**
 * A test-pattern clip with a tone, encoded fast, stored as s3://<bucket>/<key>. With `noise`,
 * every frame carries fresh grain, which no encoder compresses well: outputs come out large
 * (about 3 MiB per second at 640x360), so their uploads take several parts.
 */
export async function putClip(
  store: ObjectStore,
  where: { bucket: string; key: string },
  seconds: number,
  size: string,
  options: { noise?: boolean } = {},
): Promise<void> {
  const path = join(tmpdir(), `tjm-clip-${crypto.randomUUID()}.mp4`);
  const grain = options.noise ? ",noise=alls=60:allf=t" : "";
  try {
    await run("ffmpeg", [
      ...["-hide_banner", "-loglevel", "error", "-y"],
      ...["-f", "lavfi", "-i", `testsrc2=size=${size}:rate=25:duration=${seconds}${grain}`],
      ...["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${seconds}`],
      ...["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest", path],
    ]);
    await store
      .client()
      .send(new PutObjectCommand({ Bucket: where.bucket, Key: where.key, Body: await readFile(path) }));
  } finally {
    await rm(path, { force: true });
  }
}

/** Two outputs (h264/aac mp4 and vp9/opus webm) under s3://media-out/<prefix>/, with a manifest. */
export function twoOutputPlan(inputUri: string, prefix: string) {
  return {
    input: { uri: inputUri },
    outputs: [
      {
        id: "small",
        kind: "FILE",
        container: "mp4",
        destinationUri: `s3://media-out/${prefix}/small.mp4`,
        video: { codec: "h264", height: 180, preset: "fastest" },
        audio: { codec: "aac", bitrateKbps: 96 },
      },
      {
        id: "web",
        kind: "FILE",
        container: "webm",
        destinationUri: `s3://media-out/${prefix}/web.webm`,
        video: { codec: "vp9", height: 144, preset: "fastest" },
        audio: { codec: "opus", bitrateKbps: 64 },
      },
    ],
    manifestUri: `s3://media-out/${prefix}/manifest.json`,
  };
}

/**
 * The tiniest real job: s3://media-in/tiny.mp4 (a one-second 160x120 clip, see putClip) to 144p
 * h264/aac at `<prefix>/tiny.mp4`, with a manifest at `<prefix>/manifest.json`; `prefix` is a
 * path, /bucket/key-prefix. `destinations` are the paths the job writes.
 */
export function tinyPlan(prefix: string) {
  return {
    destinations: [`${prefix}/tiny.mp4`, `${prefix}/manifest.json`],
    executionPlan: {
      input: { uri: "s3://media-in/tiny.mp4" },
      outputs: [
        {
          id: "tiny",
          kind: "FILE",
          container: "mp4",
          destinationUri: `s3:/${prefix}/tiny.mp4`,
          video: { codec: "h264", height: 144, preset: "fastest" },
          audio: { codec: "aac", bitrateKbps: 64 },
        },
      ],
      manifestUri: `s3:/${prefix}/manifest.json`,
    },
  };
}

/** How grainPlan's output is written: faststart MP4 (the default), or front to back and uploaded while encoding. */
export type GrainContainer = "mp4" | "mpegts";

/**
 * A job whose upload takes several parts: `inputUri` (a grain clip, see putGrainClip) to 360p
 * h264/aac, about 13 MiB for 4 s, at `<prefix>/grain.mp4` (`grain.ts` for MPEG-TS; three 5 MiB
 * parts), with a manifest at `<prefix>/manifest.json`; `prefix` is a path, /bucket/key-prefix.
 * `destinations` are the paths the job writes.
 */
export function grainPlan(inputUri: string, prefix: string, container: GrainContainer = "mp4") {
  const output = `${prefix}/grain.${container === "mpegts" ? "ts" : "mp4"}`;
  return {
    destinations: [output, `${prefix}/manifest.json`],
    executionPlan: {
      input: { uri: inputUri },
      outputs: [
        {
          id: "grain",
          kind: "FILE",
          container,
          destinationUri: `s3:/${output}`,
          video: { codec: "h264", height: 360, preset: "fastest" },
          audio: { codec: "aac", bitrateKbps: 64 },
        },
      ],
      manifestUri: `s3:/${prefix}/manifest.json`,
    },
  };
}

/** Grain at 640x360 (four seconds unless told), stored as s3://<bucket>/<key>: the input of grainPlan. */
export function putGrainClip(
  store: ObjectStore,
  where: { bucket: string; key: string },
  seconds = 4,
): Promise<void> {
  return putClip(store, where, seconds, "640x360", { noise: true });
}

export async function readObject(store: ObjectStore, uri: string): Promise<Buffer> {
  const [bucket, ...key] = uri.slice("s3://".length).split("/");
  const answer = await store.client().send(new GetObjectCommand({ Bucket: bucket, Key: key.join("/") }));
  return Buffer.from(
    await (answer.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
  );
}

export async function listKeys(store: ObjectStore, bucket: string, prefix: string): Promise<string[]> {
  const listed = await store.client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((entry) => entry.Key ?? "").sort();
}

export async function sha256(bytes: Uint8Array): Promise<string> {
  return Buffer.from(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes))).toString("hex");
}

/**
 * How long a test waits for an agent to start: its ffmpeg probe (eleven ffmpeg processes) took
 * 1.5 s on an idle 2-core machine and 11-23 s beside the fault suite's other scenarios (load
 * average 20), where 30 s was too short for a restarted agent; the agent itself keeps trying to
 * reach the Manager and NATS for 60 s (WORKER_STARTUP_TIMEOUT_MS) after that.
 */
const AGENT_START_TIMEOUT_MS = 90_000;

/** An agent with its own state and work directories under `root`, started and registered. */
export async function startTestAgent(
  manager: TestManager,
  root: string,
  name: string,
  extra: Record<string, string> = {},
): Promise<AgentProcess> {
  const agent = startAgent({
    MANAGER_URL: manager.baseUrl,
    ENROLLMENT_TOKEN: await issueToken(manager),
    WORKER_STATE_DIR: join(root, `state-${name}`),
    WORKER_WORK_DIR: join(root, `work-${name}`),
    WORKER_NAME: name,
    WORKER_CAPACITY: "1",
    LOG_LEVEL: "debug",
    ...extra,
  });
  await agent.waitForMessage("worker started", AGENT_START_TIMEOUT_MS);
  return agent;
}

/**
 * Processes the test froze with SIGSTOP; `thawAll` (in a finally or afterAll) continues every
 * one still frozen, so a failed test never leaves a stopped process behind.
 */
export class Freezer {
  private readonly frozen = new Set<number>();

  freeze(...pids: number[]): void {
    for (const pid of pids) {
      process.kill(pid, "SIGSTOP");
      this.frozen.add(pid);
    }
  }

  thaw(...pids: number[]): void {
    for (const pid of pids) {
      this.frozen.delete(pid);
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // Already gone.
      }
    }
  }

  thawAll(): void {
    this.thaw(...this.frozen);
  }
}
