/**
 * Object storage down while jobs read their inputs and upload their outputs: for twice the
 * Workers' retry budget, and once (the first outage) for minutes.
 *
 * Each outage: one job per agent, each held at a point drawn from the seed (the store's proxy
 * holds that request until the store goes down, so every job is mid-flight when it does):
 *
 * - input-stream: a ranged read of the job's input by the agent's relay while ffmpeg streams
 *   it (after the agent logged the encode): the read fails, and past its retry budget it waits
 *   for the store, ffmpeg held on its read, the job RUNNING; once the store is back the same
 *   attempt's encode goes on. The first job of the first outage always draws it, and that
 *   outage lasts INPUT_OUTAGE_MS (5 minutes; 30 s in the CI subset). Such a job must complete
 *   on its first attempt: another attempt is judged lost (its encode was thrown away);
 * - part-1, part-2, part-3: a multipart part of the ~13 MiB output (5 MiB parts);
 * - streamed-part: a part of an output uploaded while ffmpeg writes it (the job's ffmpeg still
 *   runs): the last job of each outage writes MPEG-TS from an 8 s clip (about 28 MiB), may
 *   draw this point, and always does in the first outage;
 * - complete-upload: the CompleteMultipartUpload of the output;
 * - log-upload: the ffmpeg log, the agent's last upload;
 * - promotion: the Manager's copy of the staged output to its destination;
 * - manifest: the Manager's write of the manifest, after the output's copy.
 *
 * Then the store goes down (port closed, open connections cut, the held requests with them),
 * stays down for twice the retry budget, and comes back. Agents that ran out of budget paused
 * their uploads (WAITING_FOR_STORAGE); storage coming back does not resume them, so an operator
 * does, with POST /api/v1/operations/jobs/{jobId}/resume-uploads, once per pause. The Manager's
 * promotion retries on its own. Every job must complete once, its destinations written once,
 * from the attempt that succeeded.
 *
 * Recovery time: from the store coming back to each paused job COMPLETED (and, apart, to each
 * job whose promotion was cut COMPLETED).
 */

import { CopyObjectCommand } from "@aws-sdk/client-s3";
import { type AgentProcess, agentDirs, killAgents } from "@tjm/devstack/agent-process";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { waitFor } from "@tjm/devstack/services";
import { describe, it } from "vitest";
import { TestManager } from "../harness/manager.ts";
import { grainPlan, putGrainClip, startTestAgent } from "../harness/media-jobs.ts";
import { type S3Request, type S3RequestLog, startS3RequestLog } from "../harness/s3-request-log.ts";
import {
  chaosRuns,
  collectFacts,
  isAlive,
  pause,
  reportScenario,
  type SubmittedJob,
  seededRandom,
} from "./scenario.ts";

const SCENARIO = "storage-down";
const OUTAGES = chaosRuns({ full: 10, ci: 2 });
const AGENTS = 3;
const UPLOAD_RETRY_BUDGET_MS = 3000;
/** Storage away for twice the Workers' retry budget: uploads pause, reads of an input wait. */
const OUTAGE_MS = 2 * UPLOAD_RETRY_BUDGET_MS;
/** The first outage, with an encode reading its input: minutes, a hundred retry budgets. */
const INPUT_OUTAGE_MS = chaosRuns({ full: 5 * 60_000, ci: 30_000 });
/**
 * How long the first held request waits for the other jobs to reach their points before the
 * store goes down anyway: well under the clients' 30 s socket timeout, which would otherwise
 * fail a held request on its own.
 */
const HOLD_LIMIT_MS = 20_000;
const AGENT_ENV = {
  WORKER_CAPACITY: "1",
  WORKER_UPLOAD_PART_SIZE_MIB: "5",
  WORKER_UPLOAD_CONCURRENCY: "1",
  WORKER_UPLOAD_RETRY_BUDGET_MS: String(UPLOAD_RETRY_BUDGET_MS),
  WORKER_UPLOAD_RETRY_ATTEMPTS: "4",
  LOG_LEVEL: "info",
};

const POINTS = [
  "input-stream",
  "streamed-part",
  "part-1",
  "part-2",
  "part-3",
  "complete-upload",
  "log-upload",
  "promotion",
  "manifest",
] as const;
type Point = (typeof POINTS)[number];
/** Points where the request cut is the Manager's, not the Worker's. */
const MANAGER_POINTS: ReadonlySet<Point> = new Set(["promotion", "manifest"]);
/** The streamed job of an outage (MPEG-TS; worker-faults.ts says why not fragmented MP4): its slot, its clip's length. */
const STREAMED_SLOT = AGENTS - 1;
const STREAMED_CLIP_SECONDS = 8;

interface Target {
  jobId: string;
  /** /media-out/<scenario>/<outage>-<slot>: where its output and manifest go. */
  prefix: string;
  /** /media-in/<scenario>/<outage>-<slot>.mp4: its own copy of the clip, so its reads are told apart. */
  input: string;
  /** Its output is written front to back and uploaded while ffmpeg runs. */
  streamed: boolean;
  point: Point;
  /** When its request was first held at its point. */
  reachedAt?: number;
}

/**
 * The point a request stands for, and the job it belongs to, or undefined for any other
 * request. `ffmpeg`: the pid of the job's ffmpeg once its agent has logged the encode.
 */
function pointOf(
  request: Omit<S3Request, "status">,
  targets: Target[],
  ffmpeg: (jobId: string) => number | undefined,
): [Target, Point] | undefined {
  const encoding = (jobId: string) => ffmpeg(jobId) !== undefined;
  if (request.method === "GET" && request.range !== undefined) {
    const target = targets.find((candidate) => candidate.input === request.path);
    return target && encoding(target.jobId) ? [target, "input-stream"] : undefined;
  }
  const staged = /^\/media-out\/\.tjm-staging\/([^/]+)\/[^/]+\/[^/]+$/.exec(request.path);
  if (staged) {
    const target = targets.find((candidate) => candidate.jobId === staged[1]);
    const part = request.query.get("partNumber");
    if (target && request.method === "PUT" && part) {
      const pid = ffmpeg(target.jobId);
      const whileEncoding = target.point === "streamed-part" && pid !== undefined && isAlive(pid);
      return [target, whileEncoding ? "streamed-part" : (`part-${part}` as Point)];
    }
    if (target && request.method === "POST" && request.query.has("uploadId"))
      return [target, "complete-upload"];
    return undefined;
  }
  const logs = /^\/media-out\/\.tjm-logs\/([^/]+)\/[^/]+$/.exec(request.path);
  if (logs && request.method === "PUT") {
    const target = targets.find((candidate) => candidate.jobId === logs[1]);
    return target && [target, "log-upload"];
  }
  if (request.method !== "PUT") return undefined;
  const target = targets.find((candidate) => request.path.startsWith(`${candidate.prefix}/`));
  if (!target) return undefined;
  if (request.path === `${target.prefix}/grain.mp4` && request.copySource) return [target, "promotion"];
  if (request.path === `${target.prefix}/manifest.json`) return [target, "manifest"];
  return undefined;
}

describe("object storage down while inputs are read and uploads are in flight", () => {
  it(`loses nothing and writes nothing twice over ${OUTAGES} outages of twice the retry budget (the first of ${INPUT_OUTAGE_MS / 1000} s)`, async () => {
    const random = seededRandom(SCENARIO);
    const started = Date.now();
    let s3: S3Server | undefined;
    let store: S3RequestLog | undefined;
    let manager: TestManager | undefined;
    const scratch = await agentDirs();
    const agents: AgentProcess[] = [];
    try {
      s3 = await startS3({ buckets: ["media-in", "media-out"] });
      store = await startS3RequestLog(s3.port);
      const log = store;
      const tm = await TestManager.start({
        storage: { ...s3.settings, endpoint: log.endpoint },
        heartbeatIntervalMs: 300,
        dispatchTimeoutMs: 10_000,
      });
      manager = tm;
      const { projectId } = await tm.createProject();
      await putGrainClip(s3, { bucket: "media-in", key: "clip.mp4" });
      await putGrainClip(s3, { bucket: "media-in", key: "clip-long.mp4" }, STREAMED_CLIP_SECONDS);
      const s3Client = s3.client();
      for (let slot = 0; slot < AGENTS; slot++) {
        agents.push(await startTestAgent(tm, scratch.root, `${SCENARIO}-${slot + 1}`, AGENT_ENV));
      }

      const jobs: SubmittedJob[] = [];
      const allTargets: Target[] = [];
      const pausedRecoveries: number[] = [];
      const promotionRecoveries: number[] = [];
      const resumes = { accepted: 0, refused: [] as string[] };
      let pausedWhileDown = 0;
      let pausedJobs = 0;

      for (let outage = 0; outage < OUTAGES; outage++) {
        const targets: Target[] = [];
        const submittedAt = Date.now();
        for (let slot = 0; slot < AGENTS; slot++) {
          const prefix = `/media-out/${SCENARIO}/${outage}-${slot}`;
          const inputKey = `${SCENARIO}/${outage}-${slot}.mp4`;
          const streamed = slot === STREAMED_SLOT;
          await s3Client.send(
            new CopyObjectCommand({
              Bucket: "media-in",
              Key: inputKey,
              CopySource: `media-in/${streamed ? "clip-long.mp4" : "clip.mp4"}`,
            }),
          );
          const plan = grainPlan(`s3://media-in/${inputKey}`, prefix, streamed ? "mpegts" : "mp4");
          const jobId = await tm.submitJob({
            projectId,
            executionPlan: plan.executionPlan,
          });
          jobs.push({ jobId, destinations: plan.destinations });
          const point =
            outage === 0 && slot === 0
              ? "input-stream"
              : streamed && outage === 0
                ? "streamed-part"
                : random.pick(POINTS.filter((candidate) => streamed || candidate !== "streamed-part"));
          targets.push({ jobId, prefix, input: `/media-in/${inputKey}`, streamed, point });
        }
        allTargets.push(...targets);

        // Held requests wait for the store to go down, then die with it.
        let cut: () => void = () => {};
        const wentDown = new Promise<void>((resolve) => {
          cut = resolve;
        });
        let down = false;
        log.intercept(async (request) => {
          const hit = pointOf(request, targets, (jobId) => {
            const encoding = agents
              .flatMap((agent) => agent.logs)
              .findLast((line) => line.msg === "encoding" && line.jobId === jobId);
            return encoding?.pid as number | undefined;
          });
          if (down || !hit || hit[0].point !== hit[1]) return;
          hit[0].reachedAt ??= Date.now();
          await wentDown;
          throw new Error("the store went down");
        });
        // The Manager promotes one job after another in one transaction: while one of its
        // requests is held, a job waiting behind it (its agent done) cannot reach its point.
        const queuedBehindHeldPromotion = (target: Target) =>
          MANAGER_POINTS.has(target.point) &&
          targets.some((other) => other.reachedAt !== undefined && MANAGER_POINTS.has(other.point)) &&
          agents.some((agent) =>
            agent.logs.some((line) => line.msg === "attempt completed" && line.jobId === target.jobId),
          );
        await waitFor(
          () =>
            `the outage's jobs at their points (${targets.map((target) => `${target.point} ${target.reachedAt ? "reached" : "not yet"}`).join(", ")})`,
          async () => {
            const firstHeld = Math.min(
              ...targets.map((target) => target.reachedAt ?? Number.POSITIVE_INFINITY),
            );
            return (
              targets.every(
                (target) => target.reachedAt !== undefined || queuedBehindHeldPromotion(target),
              ) || Date.now() - firstHeld > HOLD_LIMIT_MS
            );
          },
          180_000,
          50,
        ).catch((err: unknown) =>
          console.warn(`[chaos] ${SCENARIO}: ${(err as Error).message}; going down anyway`),
        );

        // down() closes the port and cuts open connections at once; the held requests go with them.
        const downAt = Date.now();
        down = true;
        const closed = log.down();
        cut();
        await closed;
        await pause(outage === 0 ? INPUT_OUTAGE_MS : OUTAGE_MS);
        const upAt = Date.now();
        await log.up();
        log.intercept(undefined);

        // The operator: every job waiting for storage is asked to resume, once per pause.
        const jobIds = targets.map((target) => target.jobId);
        // When each job was first seen COMPLETED: jobs.completed_at is the promotion
        // transaction's start, which may precede the store's return.
        const seenCompleted = new Map<string, number>();
        await waitFor(
          `outage ${outage + 1}: every job terminal after storage returned`,
          async () => {
            const rows = await tm.sql<
              { id: string; state: string; resumeRequestedAt: Date | null; attemptUpdatedAt: Date }[]
            >`
              select j.id, j.state, a.upload_resume_requested_at as resume_requested_at,
                a.updated_at as attempt_updated_at
              from jobs j join attempts a on a.id = j.current_attempt_id
              where j.id = any(${jobIds}::uuid[])`;
            for (const row of rows) {
              if (row.state === "COMPLETED" && !seenCompleted.has(row.id))
                seenCompleted.set(row.id, Date.now());
              // Once per pause: a request sets both times alike, and the attempt moves on from it
              // (uploads resumed, then perhaps paused again) only with a later one.
              const pausedSinceResume =
                row.resumeRequestedAt === null || row.attemptUpdatedAt > row.resumeRequestedAt;
              if (row.state !== "WAITING_FOR_STORAGE" || !pausedSinceResume) continue;
              const response = await tm.request(`/api/v1/operations/jobs/${row.id}/resume-uploads`, {
                method: "POST",
              });
              if (response.status === 202) resumes.accepted++;
              else resumes.refused.push(`${row.id}: ${response.status} ${await response.text()}`);
            }
            return rows.every((row) => ["COMPLETED", "FAILED", "CANCELLED"].includes(row.state));
          },
          120_000,
          200,
        ).catch((err: unknown) => console.warn(`[chaos] ${SCENARIO}: ${(err as Error).message}`));

        const outcomes = await tm.sql<{ id: string; pausedAt: Date | null }[]>`
          select j.id, min(a.upload_paused_at) as paused_at
          from jobs j join attempts a on a.job_id = j.id
          where j.id = any(${jobIds}::uuid[]) and j.state = 'COMPLETED'
          group by j.id`;
        for (const outcome of outcomes) {
          const target = targets.find((candidate) => candidate.jobId === outcome.id) as Target;
          const completedAt = seenCompleted.get(outcome.id);
          if (outcome.pausedAt) {
            pausedJobs++;
            if (outcome.pausedAt.getTime() < upAt) pausedWhileDown++;
            if (completedAt !== undefined) pausedRecoveries.push(completedAt - upAt);
          } else if (target.reachedAt && MANAGER_POINTS.has(target.point) && completedAt !== undefined) {
            promotionRecoveries.push(completedAt - upAt);
          }
        }
        console.info(
          `[chaos] ${SCENARIO}: outage ${outage + 1}/${OUTAGES}: down ${downAt - submittedAt} ms after submission for ${upAt - downAt} ms, all terminal ${Date.now() - upAt} ms after; points ${targets
            .map(
              (target) =>
                `${target.point} ${target.reachedAt ? `held at +${target.reachedAt - submittedAt} ms` : "(not reached)"}`,
            )
            .join(", ")}`,
        );
      }

      const byPoint = POINTS.map((point) => {
        const chosen = allTargets.filter((target) => target.point === point);
        return `${point} ${chosen.filter((target) => target.reachedAt !== undefined).length}/${chosen.length}`;
      }).join(", ");
      const [attempts] = await tm.sql<{ count: number }[]>`
        select count(*)::int as count from attempts
        where job_id = any(${jobs.map((job) => job.jobId)}::uuid[])`;
      const readingInputWhenDown = (jobId: string) =>
        allTargets.some(
          (target) =>
            target.jobId === jobId && target.point === "input-stream" && target.reachedAt !== undefined,
        );
      const inputStreamJobs = await Promise.all(
        allTargets
          .filter((target) => readingInputWhenDown(target.jobId))
          .map(async (target) => {
            const [row] = await tm.sql<{ attempts: number }[]>`
              select count(*)::int as attempts from attempts where job_id = ${target.jobId}`;
            const logs = agents.flatMap((agent) => agent.logs);
            const at = (msg: string) =>
              Date.parse(String(logs.find((line) => line.msg === msg && line.jobId === target.jobId)?.time));
            return {
              attempts: row?.attempts ?? 0,
              waitedMs:
                at("storage answers again; the encode goes on") -
                at("storage unavailable; the encode waits for its input"),
            };
          }),
      );
      await reportScenario(
        {
          scenario: SCENARIO,
          runs: OUTAGES,
          seed: random.seed,
          durationMs: Date.now() - started,
          recoveries: [
            { what: "paused jobs completing after storage returned", samplesMs: pausedRecoveries },
            { what: "cut promotions completing after storage returned", samplesMs: promotionRecoveries },
          ],
          notes: [
            `requests held then cut per point (reached/drawn): ${byPoint}`,
            `${pausedJobs} job(s) paused for storage (${pausedWhileDown} while it was down); resume-uploads 202: ${resumes.accepted}, refused: ${resumes.refused.length}${resumes.refused.length ? ` (${resumes.refused.slice(0, 3).join("; ")})` : ""}`,
            `${AGENTS} agents, capacity 1, retry budget ${UPLOAD_RETRY_BUDGET_MS} ms, outages of ${OUTAGE_MS} ms (the first ${INPUT_OUTAGE_MS} ms); attempts in all: ${attempts?.count} for ${jobs.length} jobs`,
            `input-stream jobs (reached): ${inputStreamJobs.length}, each on its first attempt: ${inputStreamJobs.every((job) => job.attempts === 1)}; their waits for the store: ${inputStreamJobs.map((job) => `${job.waitedMs} ms`).join(", ")}`,
          ],
        },
        await collectFacts(
          tm.sql,
          log,
          jobs.map((job) => ({ ...job, keepsItsAttempt: readingInputWhenDown(job.jobId) })),
          agents,
          { objects: s3 },
        ),
      );
    } finally {
      store?.intercept(undefined);
      await killAgents();
      await manager?.close();
      await store?.close();
      await s3?.stop();
      await scratch.cleanup();
    }
  });
});
