/**
 * What the execution benches (overhead, dispatch, tiny-jobs) run real jobs on: one Manager on
 * Node as an operator starts it (`npm run manager`, its own fresh schema), object storage on
 * s3rver in a child process on loopback, and Worker agents as `npm run worker` runs them
 * (`bun worker-agent/src/main.ts`, devstack/src/agent-process.ts), each enrolled with a token
 * from the real route; on the bench's NATS server or on a three-node cluster (nats-cluster.ts).
 *
 * Timestamps come from three places on the same machine clock: PostgreSQL (`now()` of the
 * transaction that recorded each step: jobs.created_at, attempts.dispatched_at, accepted_at,
 * completion_accepted_at, jobs.completed_at, the lease's outbox row published_at), the agents'
 * JSON log lines (`time`, milliseconds) and the Workers' progress messages on core NATS, which
 * the bench subscribes to (the last one of an attempt carries ffmpeg's final fps).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type AgentProcess, type LogLine, startAgent } from "@tjm/devstack/agent-process";
import { S3RVER_CREDENTIALS } from "@tjm/devstack/s3rver";
import { decodeMessage, type Progress, ProgressSchema, subjects } from "@tjm/protocol";
import type { BenchContext } from "../scenario.ts";
import { issueEnrollmentToken, JOBS_PATH } from "./api.ts";
import { HttpClient } from "./load.ts";
import { createProject, freshManagerSchema, REPOSITORY_ROOT, startManager } from "./manager-process.ts";
import { type BenchNats, singleServer } from "./nats-cluster.ts";
import { findProcessTree, type ProcessTree } from "./proc.ts";
import type { S3ServerReady } from "./s3-server.ts";

const run = promisify(execFile);

// The AWS SDK warns once per process that its releases after January 2027 need Node 22; the
// bench, s3rver's child and the Manager (which inherits this environment) need not print it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

export const INPUT_BUCKET = "media-in";
export const OUTPUT_BUCKET = "media-out";
const S3_CHILD_SCRIPT = fileURLToPath(new URL("./s3-server.ts", import.meta.url));
const AGENT_START_TIMEOUT_MS = 120_000;
const TERMINAL_STATES = new Set(["COMPLETED", "FAILED", "CANCELLED"]);

let clockOffset = Date.now() - performance.now();

/**
 * Wall-clock milliseconds with sub-millisecond resolution: the monotonic clock, re-anchored
 * whenever it strays more than a millisecond from Date.now() (whole milliseconds), so it stays
 * comparable with PostgreSQL's and the agents' timestamps however long the run.
 */
export function wallNow(): number {
  const monotonic = performance.now();
  const date = Date.now();
  if (Math.abs(date - (monotonic + clockOffset)) > 1) clockOffset = date - monotonic;
  return monotonic + clockOffset;
}

/**
 * A testsrc2 picture with a 440 Hz tone, `seconds` long, as H.264 (CRF 18, so decoding it
 * is like decoding a real mezzanine rather than a trivially small stream) and AAC in MP4.
 */
export async function makeClip(
  path: string,
  options: { seconds: number; size: string; rate: number },
): Promise<void> {
  await run("ffmpeg", [
    ...["-hide_banner", "-loglevel", "error", "-nostdin", "-y"],
    ...[
      "-f",
      "lavfi",
      "-i",
      `testsrc2=size=${options.size}:rate=${options.rate}:duration=${options.seconds}`,
    ],
    ...["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${options.seconds}`],
    ...["-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p"],
    ...["-c:a", "aac", "-b:a", "192k", "-shortest", "-movflags", "+faststart", path],
  ]);
}

/** A scratch directory removed when the run ends. */
export async function scratchDirectory(context: BenchContext, label: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), `tjm-bench-${label}-`));
  context.cleanup.defer(`remove ${directory}`, () => rm(directory, { recursive: true, force: true }));
  return directory;
}

export interface S3Child {
  endpoint: string;
  pid: number;
  client: S3Client;
  put(bucket: string, key: string, path: string): Promise<void>;
  stop(): Promise<void>;
}

async function startS3Child(context: BenchContext): Promise<S3Child> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", S3_CHILD_SCRIPT], {
    cwd: REPOSITORY_ROOT,
    env: { ...process.env, S3_BUCKETS: [INPUT_BUCKET, OUTPUT_BUCKET].join(",") },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  context.cleanup.defer("stop s3rver", stop);
  const ready = await new Promise<S3ServerReady>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (line) => {
      try {
        resolve(JSON.parse(line) as S3ServerReady);
      } catch {
        reject(new Error(`s3rver printed ${line}`));
      }
    });
    child.once("exit", (code) => reject(new Error(`s3rver exited with ${code}: ${stderr}`)));
  });
  const client = new S3Client({
    endpoint: ready.endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  context.cleanup.defer("close the S3 client", async () => client.destroy());
  return {
    endpoint: ready.endpoint,
    pid: child.pid as number,
    client,
    async put(bucket, key, path) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: await readFile(path) }));
    },
    stop,
  };
}

/** What PostgreSQL recorded of a job's current attempt, in wall-clock ms. */
export interface JobTimes {
  jobId: string;
  state: string;
  attempts: number;
  attemptId: string;
  createdMs: number;
  dispatchedMs: number;
  /** When the lease was marked published (outbox.published_at): right after the scheduler published it. */
  leasePublishedMs: number;
  /** The Manager applied the Worker's `accepted` report: the attempt went RUNNING. */
  acceptedMs: number;
  /** The Manager applied the `completed` report; promotion follows. */
  completionAcceptedMs: number;
  completedMs: number;
  failureCode: string | null;
}

/** The timestamps are null until the step happened. */
type NullableTimes = Omit<JobTimes, TimeKey> & { [K in Exclude<TimeKey, "leasePublishedMs">]: number | null };
type TimeKey =
  | "createdMs"
  | "dispatchedMs"
  | "leasePublishedMs"
  | "acceptedMs"
  | "completionAcceptedMs"
  | "completedMs";

export interface Submission {
  jobId: string;
  /** Just before the request was written. */
  sentAtMs: number;
  /** When the 201 had been read. */
  answeredAtMs: number;
}

export interface AttemptProgress {
  last: Progress;
  messages: number;
}

export interface Cluster {
  schema: string;
  baseUrl: string;
  s3: S3Child;
  agents: AgentProcess[];
  /** The Manager's processes (npm, sh and its node). */
  manager: ProcessTree;
  submit(executionPlan: Record<string, unknown>): Promise<Submission>;
  /** The plan as the Manager stored it (normalised, defaults filled in): what a Worker's lease carries. */
  storedPlan(jobId: string): Promise<Record<string, unknown>>;
  /** Resolves with the job's state once it is COMPLETED, FAILED or CANCELLED. */
  waitForJob(jobId: string, timeoutMs: number, pollMs?: number): Promise<string>;
  /** Jobs per state. */
  states(): Promise<Record<string, number>>;
  /** Failed attempts per failure code, as "CODE xN (e.g. <a message>)"; empty when none failed. */
  failedAttempts(): Promise<string[]>;
  times(jobIds: string[]): Promise<Map<string, JobTimes>>;
  /** The first log line with this message and attempt, from whichever agent wrote it. */
  agentLog(msg: string, attemptId: string): LogLine | undefined;
  progress(attemptId: string): AttemptProgress | undefined;
  /** When a job.updated event taking the job to `to` first arrived on the SSE stream (wall ms; watchEvents only). */
  eventArrival(jobId: string, to: string): number | undefined;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Names the schema (bench_<run>_<name>), the subject prefix and the scratch directories. */
  name: string;
  workers: number;
  /** WORKER_CAPACITY of every agent; the agent's probe decides when undefined. */
  capacity?: number;
  /** Subscribe to the Manager's SSE stream and note when each job.updated arrives. */
  watchEvents?: boolean;
  /** The bench's NATS server unless given. */
  nats?: BenchNats;
}

export async function startCluster(context: BenchContext, options: ClusterOptions): Promise<Cluster> {
  const { schema, env } = await freshManagerSchema(context, options.name);
  const { projectId } = await createProject(env, "bench", options.name);
  const s3 = await startS3Child(context);
  const nats = options.nats ?? singleServer(context);
  const managerProcess = await startManager("node", env, context.cleanup, {
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    S3_FORCE_PATH_STYLE: "true",
    S3_CHECKSUMS: "WHEN_REQUIRED",
    ...nats.managerSettings,
  });
  const manager = findProcessTree("DATABASE_SCHEMA", schema);
  const http = new HttpClient(managerProcess.baseUrl, context.token, 16);
  context.cleanup.defer("close the job client", async () => http.close());

  // Every progress message of the run, the last per attempt kept (ffmpeg's final figures).
  const nc: NatsConnection = await connect({
    servers: nats.url.split(","),
    authenticator: nats.authenticator,
  });
  context.cleanup.defer("close the progress subscription", () => nc.close());
  const progress = new Map<string, AttemptProgress>();
  nc.subscribe(subjects.allWorkerProgress(schema), {
    callback: (err, msg) => {
      if (err) return;
      const decoded = decodeMessage(ProgressSchema, msg.data);
      if (!decoded.ok) return;
      const known = progress.get(decoded.value.attemptId);
      if (!known) progress.set(decoded.value.attemptId, { last: decoded.value, messages: 1 });
      else {
        known.messages++;
        if (Date.parse(decoded.value.at) >= Date.parse(known.last.at)) known.last = decoded.value;
      }
    },
  });

  const events = options.watchEvents
    ? await subscribeJobUpdates(managerProcess.baseUrl, context.token)
    : { arrivals: new Map<string, number>(), close: async () => {} };
  context.cleanup.defer("close the event stream", events.close);

  const scratch = await scratchDirectory(context, options.name);
  const agents: AgentProcess[] = [];
  context.cleanup.defer("stop the Worker agents", async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
  });
  for (let index = 0; index < options.workers; index++) {
    const token = await issueEnrollmentToken(http);
    agents.push(
      startAgent({
        MANAGER_URL: managerProcess.baseUrl,
        ENROLLMENT_TOKEN: token,
        WORKER_STATE_DIR: join(scratch, `state-${index}`),
        WORKER_WORK_DIR: join(scratch, `work-${index}`),
        WORKER_NAME: `bench-${options.name}-${index}`,
        ...(options.capacity === undefined ? {} : { WORKER_CAPACITY: String(options.capacity) }),
        LOG_LEVEL: "info",
      }),
    );
  }
  await Promise.all(
    agents.map((agent) => agent.waitForMessage("consuming commands", AGENT_START_TIMEOUT_MS)),
  );
  const workersTable = context.admin(`${schema}.workers`);
  const jobsTable = context.admin(`${schema}.jobs`);
  const attemptsTable = context.admin(`${schema}.attempts`);
  const outboxTable = context.admin(`${schema}.outbox`);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [row] = await context.admin<{ online: number }[]>`
      select count(*)::int as online from ${workersTable} where connectivity = 'ONLINE'`;
    if ((row?.online ?? 0) >= options.workers) break;
    if (Date.now() > deadline) throw new Error(`only ${row?.online ?? 0} Workers came ONLINE`);
    await sleep(100);
  }

  return {
    schema,
    baseUrl: managerProcess.baseUrl,
    s3,
    agents,
    manager,
    async submit(executionPlan) {
      const body = Buffer.from(JSON.stringify({ projectId, executionPlan }));
      const sentAtMs = wallNow();
      const response = await http.expect(201, "POST", JOBS_PATH, body);
      const answeredAtMs = wallNow();
      return { jobId: (JSON.parse(response.body) as { id: string }).id, sentAtMs, answeredAtMs };
    },
    async storedPlan(jobId) {
      const response = await http.expect(200, "GET", `${JOBS_PATH}/${jobId}`);
      return (JSON.parse(response.body) as { executionPlan: Record<string, unknown> }).executionPlan;
    },
    async waitForJob(jobId, timeoutMs, pollMs = 20) {
      const giveUpAt = Date.now() + timeoutMs;
      for (;;) {
        const [row] = await context.admin<{ state: string }[]>`
          select state from ${jobsTable} where id = ${jobId}`;
        if (row && TERMINAL_STATES.has(row.state)) return row.state;
        if (Date.now() > giveUpAt)
          throw new Error(`job ${jobId} still ${row?.state ?? "missing"} after ${timeoutMs} ms`);
        await sleep(pollMs);
      }
    },
    async states() {
      const rows = await context.admin<{ state: string; jobs: number }[]>`
        select state, count(*)::int as jobs from ${jobsTable} group by state`;
      return Object.fromEntries(rows.map((row) => [row.state, row.jobs]));
    },
    async failedAttempts() {
      const rows = await context.admin<{ code: string | null; message: string | null; attempts: number }[]>`
        select failure_code as code, min(failure_message) as message, count(*)::int as attempts
        from ${attemptsTable} where state = 'FAILED' group by failure_code order by 3 desc`;
      return rows.map(
        (row) => `${row.code ?? "no code"} x${row.attempts} (e.g. ${row.message ?? "no message"})`,
      );
    },
    async times(jobIds) {
      const rows = await context.admin<NullableTimes[]>`
        select j.id as "jobId", j.state, a.id as "attemptId", a.failure_code as "failureCode",
               (select count(*)::int from ${attemptsTable} x where x.job_id = j.id) as attempts,
               (extract(epoch from j.created_at) * 1000)::float8 as "createdMs",
               (extract(epoch from a.dispatched_at) * 1000)::float8 as "dispatchedMs",
               (extract(epoch from a.accepted_at) * 1000)::float8 as "acceptedMs",
               (extract(epoch from a.completion_accepted_at) * 1000)::float8 as "completionAcceptedMs",
               (extract(epoch from j.completed_at) * 1000)::float8 as "completedMs"
        from ${jobsTable} j join ${attemptsTable} a on a.id = j.current_attempt_id
        where j.id = any(${jobIds}::uuid[])`;
      const leases = await context.admin<{ attemptId: string; publishedMs: number | null }[]>`
        select payload->>'attemptId' as "attemptId",
               (extract(epoch from published_at) * 1000)::float8 as "publishedMs"
        from ${outboxTable} where kind = 'worker.command' and payload->>'type' = 'lease'`;
      const published = new Map(leases.map((lease) => [lease.attemptId, lease.publishedMs]));
      const time = (value: number | null | undefined) => value ?? Number.NaN;
      return new Map(
        rows.map((row): [string, JobTimes] => [
          row.jobId,
          {
            ...row,
            createdMs: time(row.createdMs),
            dispatchedMs: time(row.dispatchedMs),
            leasePublishedMs: time(published.get(row.attemptId)),
            acceptedMs: time(row.acceptedMs),
            completionAcceptedMs: time(row.completionAcceptedMs),
            completedMs: time(row.completedMs),
          },
        ]),
      );
    },
    agentLog(msg, attemptId) {
      for (const agent of agents) {
        const line = agent.logs.find((entry) => entry.msg === msg && entry.attemptId === attemptId);
        if (line) return line;
      }
      return undefined;
    },
    progress: (attemptId) => progress.get(attemptId),
    eventArrival: (jobId, to) => events.arrivals.get(`${jobId} ${to}`),
    async stop() {
      await events.close();
      await Promise.all(agents.map((agent) => agent.stop()));
      await nc.close();
      http.close();
      await managerProcess.stop();
      await s3.stop();
    },
  };
}

/**
 * One subscriber on GET /api/v1/operations/events noting when each job.updated event arrives,
 * keyed by "<jobId> <to state>" (the first arrival only).
 */
async function subscribeJobUpdates(
  baseUrl: string,
  token: string,
): Promise<{ arrivals: Map<string, number>; close(): Promise<void> }> {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/api/v1/operations/events`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (response.status !== 200 || !response.body) throw new Error(`event stream answered ${response.status}`);
  const arrivals = new Map<string, number>();
  let connected: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const reader = response.body.getReader();
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        const at = wallNow();
        buffer += decoder.decode(chunk.value, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith(": connected")) connected();
          if (!block.includes("event: job.updated\n")) continue;
          const data = block.split("\n").find((line) => line.startsWith("data: "));
          if (!data) continue;
          const envelope = JSON.parse(data.slice("data: ".length)) as {
            data: { jobId?: string; to?: string };
          };
          const key = `${envelope.data.jobId} ${envelope.data.to}`;
          if (!arrivals.has(key)) arrivals.set(key, at);
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  await Promise.race([opened, sleep(5000)]);
  let closing: Promise<void> | undefined;
  return {
    arrivals,
    close() {
      closing ??= (async () => {
        controller.abort();
        await reading;
      })();
      return closing;
    },
  };
}

/** A log line's time in wall-clock ms (the agent writes whole milliseconds). */
export const logTime = (line: LogLine | undefined) => (line ? Date.parse(line.time) : Number.NaN);
