/**
 * Worker faults at exact points of a job's first attempt, on real agents running real ffmpeg
 * against s3rver behind a request log. Each job's point is drawn from the seed:
 *
 * - download: while the agent's first GET of the job's input is in flight (the request is held):
 *   the relay's ranged read for ffprobe, or a download when the input is not streamed;
 * - encode: 0-400 ms after the agent logs `encoding` (its ffmpeg dies with it);
 * - part-1, part-2, part-3: while that multipart part of the output is in flight (one part at
 *   a time, 5 MiB parts of a ~13 MiB output);
 * - complete-upload: while the CompleteMultipartUpload of the output is in flight;
 * - log-upload: while the ffmpeg log is uploaded, the agent's last step before reporting
 *   `completed`;
 * - after-report (kill only): as soon as the agent logs `attempt completed`;
 * - streamed-part (`streamedOutputs` only): while a part of a streamed output is in flight and
 *   the job's ffmpeg still runs, i.e. a part uploaded while ffmpeg writes the file.
 *
 * With `streamedOutputs`, every other job writes MPEG-TS from an 8 s clip (about 28 MiB: parts
 * 2 to 5 go up while ffmpeg runs, part 1 and the short last one after), and the first of them
 * is always faulted at streamed-part, so every run has one; the other jobs stay faststart MP4
 * from the 4 s clip. Not fragmented MP4: its fragments start at keyframes, and x264's default
 * interval (250 frames, 10 s here) leaves a clip this short one fragment, written at the exit.
 * The checker then also reads every destination back and compares it with the output the
 * succeeded attempt reported.
 *
 * `kill`: the agent (and its ffmpeg) is SIGKILLed, the held request cut, and the agent started
 * again on its state directory, as a supervisor would. `freeze`: a zombie — the agent (and its
 * ffmpeg) is SIGSTOPped until the Manager has failed the attempt as lost, then continued, and
 * the held request let through: whatever the zombie then uploads or reports must change nothing.
 *
 * Recovery time: from the fault to the job running again (its next attempt accepted by a
 * Worker, or the restarted agent continuing the same attempt).
 *
 * `commit: "multipart"`: the same on Swift's s3api (s3rver cannot abort or list uploads) with
 * S3_COMMIT=multipart: the parts go to the destination itself, and there is no
 * complete-upload point (only the Manager completes an upload).
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CopyObjectCommand } from "@aws-sdk/client-s3";
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { waitFor } from "@tjm/devstack/services";
import { type SwiftServer, startSwift } from "@tjm/devstack/swift";
import { createLogger } from "@tjm/platform";
import { TestManager } from "../harness/manager.ts";
import {
  Freezer,
  type GrainContainer,
  grainPlan,
  putGrainClip,
  startTestAgent,
} from "../harness/media-jobs.ts";
import { type S3Request, type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";
import { collectFacts, isAlive, pause, reportScenario, type SubmittedJob, seededRandom } from "./scenario.ts";
import { type Fault, Striker } from "./striker.ts";

export type WorkerFault = "kill" | "freeze";

/** How many leases the agents turned down, by the reason they logged. */
function rejections(slots: Slot[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of slots.flatMap((slot) => slot.instances).flatMap((agent) => agent.logs)) {
    if (line.msg === "lease rejected") counts[String(line.reason)] = (counts[String(line.reason)] ?? 0) + 1;
  }
  return counts;
}

/** For the first rejections: what the agent held then, and what the Manager says of it now. */
async function heldWhenRejected(tm: TestManager, slots: Slot[]): Promise<string[]> {
  const lines = slots
    .flatMap((slot) => slot.instances)
    .flatMap((agent) => agent.logs)
    .filter((line) => line.msg === "lease rejected")
    .slice(0, 5);
  const notes: string[] = [];
  for (const line of lines) {
    const held = (line.holding as string[] | undefined) ?? [];
    const rows = await tm.sql<{ id: string; state: string; failureCode: string | null; accepted: boolean }[]>`
      select id, state, failure_code, completion_accepted_at is not null as accepted from attempts
      where id = any(${held}::uuid[])`;
    const story = slots
      .flatMap((slot) =>
        slot.instances.map((agent, index) => ({ agent, label: `${slot.name}#${index + 1}` })),
      )
      .flatMap(({ agent, label }) =>
        agent.logs
          .filter((logged) => held.includes(logged.attemptId as string))
          .map((logged) => `${logged.time.slice(11, 23)} ${label} ${logged.msg}`),
      )
      .sort();
    notes.push(
      `a rejection at ${line.time} (${story.join("; ")}) while holding ${rows
        .map(
          (row) =>
            `${row.id.slice(0, 8)} ${row.state}${row.failureCode ? ` ${row.failureCode}` : ""}${row.accepted ? " (completion accepted)" : ""}`,
        )
        .join(", ")}`,
    );
  }
  return notes;
}

const POINTS = {
  kill: ["download", "encode", "part-1", "part-2", "part-3", "complete-upload", "log-upload", "after-report"],
  freeze: ["download", "encode", "part-1", "part-2", "part-3", "complete-upload", "log-upload"],
} as const;
type Point = (typeof POINTS)[WorkerFault][number] | "streamed-part";

/** With `streamedOutputs`: the container of job `index`'s output (see the file's comment). */
function containerOf(index: number, streamedOutputs: boolean): GrainContainer {
  return streamedOutputs && index % 2 === 1 ? "mpegts" : "mp4";
}

/** The clip streamed jobs read: long enough that several parts go up while ffmpeg runs. */
const STREAMED_CLIP_SECONDS = 8;

const AGENTS = 3;
const LOST_AFTER_MS = 3000;
/**
 * How long every job has to end. On a 2-core machine running the fault suite's other scenarios
 * beside this one (load average 20), a killed agent took 20-60 s to run its next job (its
 * ffmpeg probe alone 11-23 s), and 120 s + 6 s a job ended the wait with jobs still running:
 * their facts, read while they finished, are no verdict.
 */
const TERMINAL_WAIT_MS = 240_000;
const TERMINAL_WAIT_PER_JOB_MS = 15_000;
const AGENT_ENV = {
  WORKER_CAPACITY: "1",
  WORKER_UPLOAD_PART_SIZE_MIB: "5",
  WORKER_UPLOAD_CONCURRENCY: "1",
  // Debug: a failed run's logs (kept, see keepLogs) show which commands an agent skipped.
  LOG_LEVEL: "debug",
};

/**
 * A failed run's evidence, kept on disk (CHAOS_LOGS_DIR, or a fresh temp dir): the Manager's log
 * and every agent process's, killed ones included, one JSON line each. The scenario's
 * directories are deleted at its end, and a timing-dependent loss may not come back with its seed.
 */
async function keepLogs(scenario: string, managerLog: string[], slots: Slot[]): Promise<string> {
  const parent = process.env.CHAOS_LOGS_DIR ?? tmpdir();
  await mkdir(parent, { recursive: true });
  const directory = await mkdtemp(join(parent, `tjm-chaos-${scenario}-`));
  await writeFile(join(directory, "manager.log"), `${managerLog.join("\n")}\n`);
  for (const slot of slots) {
    for (const [index, agent] of slot.instances.entries()) {
      await writeFile(join(directory, `${slot.name}#${index + 1}.log`), `${agent.describe()}\n`);
    }
  }
  return directory;
}

interface Slot {
  name: string;
  current: AgentProcess;
  /** Every process this slot ran, killed ones included: their logs are evidence. */
  instances: AgentProcess[];
}

interface Target {
  index: number;
  jobId: string;
  point: Point;
  /** Its output is written front to back and uploaded while ffmpeg runs. */
  streamed: boolean;
  /** Attempt 1's id, once dispatched. */
  attemptId?: string;
  /** An `encode` fault is scheduled (it strikes after a random delay). */
  scheduled?: boolean;
  faultedAt?: number;
}

export async function runWorkerFaults(options: {
  scenario: string;
  fault: WorkerFault;
  runs: number;
  commit?: "multipart";
  /** Half the jobs get an output uploaded while ffmpeg writes it, and a streamed-part point. */
  streamedOutputs?: boolean;
}): Promise<void> {
  const { scenario, fault, runs } = options;
  const streamedOutputs = options.streamedOutputs === true;
  const multipart = options.commit === "multipart";
  const points: Point[] = POINTS[fault].filter((point) => !(multipart && point === "complete-upload"));
  if (streamedOutputs) points.push("streamed-part");
  const random = seededRandom(scenario);
  const started = Date.now();
  let s3: S3Server | undefined;
  let swift: SwiftServer | undefined;
  let store: S3RequestLog | undefined;
  let manager: TestManager | undefined;
  const scratch = await agentDirs();
  const freezer = new Freezer();
  const slots: Slot[] = [];
  const managerLog: string[] = [];
  let striker: Striker<Target, Slot> | undefined;
  try {
    let objects: SwiftServer | S3Server;
    if (multipart) {
      swift = await startSwift();
      for (const bucket of ["media-in", "media-out"]) await swift.createBucket(bucket);
      objects = swift;
    } else {
      s3 = await startS3({ buckets: ["media-in", "media-out"] });
      objects = s3;
    }
    store = await startS3RequestLog(objects.port);
    const log = store;
    const tm = await TestManager.start({
      storage: { ...objects.settings, endpoint: store.endpoint },
      heartbeatIntervalMs: 300,
      lostAfterMs: LOST_AFTER_MS,
      dispatchTimeoutMs: 10_000,
      env: { S3_COMMIT: multipart ? "multipart" : "copy" },
      logger: createLogger("debug", (line) => managerLog.push(line)),
    });
    manager = tm;
    const { projectId } = await tm.createProject();
    await putGrainClip(objects, { bucket: "media-in", key: "clip.mp4" });
    if (streamedOutputs) {
      await putGrainClip(objects, { bucket: "media-in", key: "clip-long.mp4" }, STREAMED_CLIP_SECONDS);
    }
    const client = objects.client();
    for (let index = 0; index < runs; index++) {
      const clip = containerOf(index, streamedOutputs) === "mp4" ? "clip.mp4" : "clip-long.mp4";
      await client.send(
        new CopyObjectCommand({
          Bucket: "media-in",
          Key: `chaos/${index}.mp4`,
          CopySource: `media-in/${clip}`,
        }),
      );
    }
    for (let slot = 0; slot < AGENTS; slot++) {
      const name = `${scenario}-${slot + 1}`;
      const agent = await startTestAgent(tm, scratch.root, name, AGENT_ENV);
      slots.push({ name, current: agent, instances: [agent] });
    }

    const targets: Target[] = [];
    const jobs: SubmittedJob[] = [];
    for (let index = 0; index < runs; index++) {
      const prefix = `/media-out/${scenario}/${index}`;
      const container = containerOf(index, streamedOutputs);
      const plan = grainPlan(`s3://media-in/chaos/${index}.mp4`, prefix, container);
      const jobId = await tm.submitJob({
        projectId,
        executionPlan: plan.executionPlan,
      });
      jobs.push({ jobId, destinations: plan.destinations });
      const streamed = container !== "mp4";
      const firstStreamed = streamed && !targets.some((target) => target.streamed);
      const point = firstStreamed
        ? "streamed-part"
        : random.pick(points.filter((candidate) => streamed || candidate !== "streamed-part"));
      targets.push({ index, jobId, streamed, point });
    }

    const slotOfAttempt = async (attemptId: string): Promise<Slot | undefined> => {
      const [row] = await tm.sql<{ name: string }[]>`
        select w.name from attempts a join workers w on w.id = a.worker_id where a.id = ${attemptId}`;
      return slots.find((slot) => slot.name === row?.name);
    };
    const ffmpegOf = (slot: Slot, attemptId: string) =>
      slot.current.logs.find((line) => line.msg === "encoding" && line.attemptId === attemptId)?.pid as
        | number
        | undefined;
    const killProcess = (pid: number | undefined) => {
      if (pid === undefined) return;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };

    /** Kills the slot's agent (and the attempt's ffmpeg) and starts it again in the background. */
    const kill = (slot: Slot, attemptId: string): Fault => {
      const ffmpeg = ffmpegOf(slot, attemptId);
      const delivered = slot.current.stop("SIGKILL").then(() => killProcess(ffmpeg));
      const recovered = delivered.then(async () => {
        const agent = await startTestAgent(tm, scratch.root, slot.name, AGENT_ENV);
        slot.current = agent;
        slot.instances.push(agent);
      });
      return { delivered, recovered };
    };

    /** Freezes the slot's agent (and ffmpeg) until the attempt is failed as lost, then thaws it. */
    const freeze = async (slot: Slot, attemptId: string): Promise<void> => {
      // ffmpeg too while it encodes; once it has exited its pid is gone.
      const pids = [slot.current.child.pid as number, ffmpegOf(slot, attemptId)].filter(
        (pid): pid is number => pid !== undefined && isAlive(pid),
      );
      try {
        freezer.freeze(...pids);
        await waitFor(
          `attempt ${attemptId} failed as lost while its Worker is frozen`,
          async () => {
            const [row] = await tm.sql<
              { state: string }[]
            >`select state from attempts where id = ${attemptId}`;
            return row?.state === "FAILED";
          },
          LOST_AFTER_MS * 10,
          100,
        );
      } finally {
        freezer.thaw(...pids);
      }
    };

    const strikes = new Striker<Target, Slot>({
      slotOf: slotOfAttempt,
      fault: (slot, target, attemptId) => {
        target.faultedAt = Date.now();
        if (fault === "kill") return kill(slot, attemptId);
        const delivered = freeze(slot, attemptId);
        // A freeze that failed is told to its strike; the slot is free again either way.
        return { delivered, recovered: delivered.catch(() => {}) };
      },
    });
    striker = strikes;
    const strike = (target: Target, attemptId: string) => strikes.strike(target, attemptId);

    /** Whether the attempt's ffmpeg is running (its agent logged it, and the process lives). */
    const encodingNow = async (attemptId: string) => {
      const slot = await slotOfAttempt(attemptId);
      const pid = slot && ffmpegOf(slot, attemptId);
      return pid !== undefined && isAlive(pid);
    };
    /** A part of the attempt's output: its point, part-N, or streamed-part while ffmpeg writes the file. */
    const partPoint = async (target: Target, attemptId: string, part: string) =>
      target.point === "streamed-part" && (await encodingNow(attemptId)) ? "streamed-part" : `part-${part}`;

    const targetOfRequest = async (
      request: Omit<S3Request, "status">,
    ): Promise<[Target, string] | undefined> => {
      const input = /^\/media-in\/chaos\/(\d+)\.mp4$/.exec(request.path);
      if (input && request.method === "GET") {
        const target = targets[Number(input[1])];
        if (target?.point !== "download") return undefined;
        // The download follows the lease at once: the watcher may not have seen the attempt yet.
        const [first] = await tm.sql<{ id: string }[]>`
          select a.id from jobs j join attempts a on a.id = j.current_attempt_id
          where j.id = ${target.jobId} and a.attempt_number = 1`;
        return first && target.faultedAt === undefined ? [target, first.id] : undefined;
      }
      const staged = /^\/media-out\/\.tjm-staging\/([^/]+)\/([^/]+)\/[^/]+$/.exec(request.path);
      if (staged) {
        const target = targets.find((candidate) => candidate.jobId === staged[1]);
        if (!target?.attemptId || target.attemptId !== staged[2]) return undefined;
        const part = request.query.get("partNumber");
        const point =
          request.method === "PUT" && part
            ? await partPoint(target, target.attemptId, part)
            : request.method === "POST" && request.query.has("uploadId")
              ? "complete-upload"
              : undefined;
        return point === target.point ? [target, target.attemptId] : undefined;
      }
      // Multipart commit: the Worker's parts go to the destination; the Manager's completion
      // (a POST there) is no Worker's point.
      const direct = new RegExp(`^/media-out/${scenario}/(\\d+)/grain\\.(?:mp4|ts)$`).exec(request.path);
      const part = request.query.get("partNumber");
      if (multipart && direct && request.method === "PUT" && part) {
        const target = targets[Number(direct[1])];
        if (!target?.attemptId) return undefined;
        const point = await partPoint(target, target.attemptId, part);
        return point === target.point ? [target, target.attemptId] : undefined;
      }
      const logs = /^\/media-out\/\.tjm-logs\/([^/]+)\/attempt-1\.log$/.exec(request.path);
      if (logs && request.method === "PUT") {
        const target = targets.find((candidate) => candidate.jobId === logs[1]);
        return target?.point === "log-upload" && target.attemptId ? [target, target.attemptId] : undefined;
      }
      return undefined;
    };

    log.intercept(async (request) => {
      const hit = await targetOfRequest(request);
      if (!hit || !(await strike(...hit))) return;
      // Killed: the request dies with its sender. Thawed: the zombie's request goes through.
      if (fault === "kill") throw new Error("the Worker was killed");
    });

    const finished = new Set<string>();
    let waitOver = false;
    // Attempt ids as they are dispatched, and the points the agents' logs show.
    const watching = (async () => {
      while (!waitOver && targets.some((target) => target.faultedAt === undefined)) {
        const firsts = await tm.sql<{ id: string; jobId: string }[]>`
          select id, job_id from attempts where attempt_number = 1 and worker_id is not null
            and job_id = any(${targets.map((target) => target.jobId)}::uuid[])`;
        for (const row of firsts) {
          const target = targets.find((candidate) => candidate.jobId === row.jobId);
          if (target) target.attemptId = row.id;
        }
        for (const target of targets) {
          if (target.faultedAt !== undefined || !target.attemptId) continue;
          const attemptId = target.attemptId;
          const logged = (msg: string) =>
            slots.some((slot) =>
              slot.current.logs.some((line) => line.msg === msg && line.attemptId === attemptId),
            );
          if (target.point === "encode" && !target.scheduled && logged("encoding")) {
            target.scheduled = true;
            setTimeout(() => void strike(target, attemptId), Math.floor(random.next() * 400));
          } else if (target.point === "after-report" && logged("attempt completed")) {
            void strike(target, attemptId);
          }
        }
        if (targets.every((target) => target.faultedAt !== undefined || finished.has(target.jobId))) break;
        await pause(50);
      }
    })();

    await waitFor(
      () => `every job terminal (${finished.size} of ${runs})`,
      async () => {
        const rows = await tm.sql<{ id: string }[]>`
          select id from jobs where id = any(${jobs.map((job) => job.jobId)}::uuid[])
            and state in ('COMPLETED', 'FAILED', 'CANCELLED')`;
        for (const row of rows) finished.add(row.id);
        return finished.size === runs;
      },
      TERMINAL_WAIT_MS + runs * TERMINAL_WAIT_PER_JOB_MS,
      500,
    )
      .catch((err: unknown) => console.warn(`[chaos] ${scenario}: ${(err as Error).message}`))
      .finally(() => {
        waitOver = true;
      });
    await watching;
    // Zombies thawed last finish what they were doing; what they report must change nothing.
    await pause(5000);

    const faulted = targets.filter((target) => target.faultedAt !== undefined);
    /** Every agent process's log lines so far, killed ones included. */
    const agentLogs = () => slots.flatMap((slot) => slot.instances).flatMap((agent) => agent.logs);
    const recoveries: number[] = [];
    for (const target of faulted) {
      const faultedAt = target.faultedAt as number;
      const [next] = await tm.sql<{ acceptedAt: Date | null }[]>`
        select min(accepted_at) as accepted_at from attempts
        where job_id = ${target.jobId} and attempt_number > 1 and accepted_at > ${new Date(faultedAt)}`;
      const continued = agentLogs().find(
        (line) =>
          line.msg === "continuing an attempt of the previous instance" &&
          line.attemptId === target.attemptId &&
          Date.parse(line.time) > faultedAt,
      );
      const resumedAt = next?.acceptedAt?.getTime() ?? (continued ? Date.parse(continued.time) : undefined);
      if (resumedAt !== undefined) recoveries.push(resumedAt - faultedAt);
    }
    /** Streamed jobs whose succeeded attempt kept parts it had sent while ffmpeg wrote the file. */
    const [succeededStreaming, succeededStreamed] = await (async () => {
      const streamedJobs = targets.filter((target) => target.streamed).map((target) => target.jobId);
      const winners = await tm.sql<{ id: string }[]>`
        select id from attempts where state = 'SUCCEEDED' and job_id = any(${streamedJobs}::uuid[])`;
      const kept = winners.filter((winner) =>
        agentLogs().some(
          (line) =>
            line.msg === "parts uploaded while the output was written" &&
            line.attemptId === winner.id &&
            Number(line.partsKept) > 0,
        ),
      );
      return [kept.length, winners.length];
    })();
    const byPoint = points
      .map((point) => {
        const chosen = targets.filter((target) => target.point === point);
        return `${point} ${chosen.filter((target) => target.faultedAt !== undefined).length}/${chosen.length}`;
      })
      .join(", ");
    const report = reportScenario(
      {
        scenario,
        runs: faulted.length,
        seed: random.seed,
        durationMs: Date.now() - started,
        recoveries: [{ what: "job running again", samplesMs: recoveries }],
        notes: [
          `${fault === "kill" ? "kills" : "freezes"} delivered per point (delivered/drawn): ${byPoint}`,
          `${AGENTS} agents, capacity 1; attempts for ${runs} jobs: ${(
            await tm.sql<{ outcome: string; count: number }[]>`
              select coalesce(failure_code, state) as outcome, count(*)::int as count from attempts
              where job_id = any(${jobs.map((job) => job.jobId)}::uuid[])
              group by 1 order by 2 desc`
          )
            .map((row) => `${row.count} ${row.outcome}`)
            .join(", ")}`,
          `leases rejected by the agents, by reason: ${JSON.stringify(rejections(slots))}`,
          ...(streamedOutputs
            ? [
                `streamed outputs: ${succeededStreaming} of ${succeededStreamed} succeeded attempts kept parts sent while ffmpeg ran`,
              ]
            : []),
          ...(await heldWhenRejected(tm, slots)),
        ],
      },
      await collectFacts(
        tm.sql,
        log,
        jobs,
        slots.flatMap((slot) => slot.instances),
        { multipartCommit: multipart, objects },
      ),
    );
    await report.catch(async (err: unknown) => {
      console.warn(`[chaos] ${scenario}: logs kept in ${await keepLogs(scenario, managerLog, slots)}`);
      throw err;
    });
  } finally {
    freezer.thawAll();
    store?.intercept(undefined);
    await striker?.settled();
    await killAgents();
    await manager?.close();
    await store?.close();
    await s3?.stop();
    await swift?.stop();
    await scratch.cleanup();
  }
}
