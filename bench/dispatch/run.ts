/**
 * Dispatch latency: one idle Worker agent, one-second jobs submitted one at a time (each
 * waits for the previous to be COMPLETED and the Worker to be idle again). Per job, from the
 * moment the bench sent the POST: the Manager applying the Worker's `accepted` report
 * (attempts.accepted_at, where the job goes QUEUED -> RUNNING and job.updated is announced)
 * and the agent spawning ffmpeg (its "encoding" log line), with the hops in between.
 *
 * Measured on the bench's one NATS server and on a three-node cluster (operator mode, streams
 * of three replicas), each with its own Manager, Worker agent and s3rver, both up throughout
 * and taking turns job by job, so the load that drifts on a shared machine skews both alike.
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { probeMedia } from "../../worker-agent/src/run/media-info.ts";
import type { Attempt, BenchContext } from "../scenario.ts";
import {
  type Cluster,
  INPUT_BUCKET,
  logTime,
  type Submission,
  scratchDirectory,
  startCluster,
  wallNow,
} from "../shared/cluster.ts";
import { singleServer, startThreeNodeCluster } from "../shared/nats-cluster.ts";
import { machineCpuSeconds } from "../shared/proc.ts";
import { type Spread, spread } from "../shared/stats.ts";
import { TINY_KEY, tinyPlan, uploadTinyClip } from "../shared/tiny-job.ts";
import type { DispatchNats } from "./settings.ts";

/** Unmeasured jobs first: JIT, connection pools, the agent's first S3 client. */
const WARMUP_JOBS = 3;
/** Idle time between jobs, so every job finds the Worker idle and the Manager quiet. */
const GAP_MS = 200;
const JOB_TIMEOUT_MS = 60_000;
const STEP_SAMPLES = 20;

/**
 * For scale, what a download and a probe of the clip take on their own here (neither holds up
 * the spawn any more): one GET from s3rver (from this process, to a file) and one ffprobe.
 */
async function timeSteps(cluster: Cluster, localClip: string, scratch: string) {
  const download: number[] = [];
  const probe: number[] = [];
  for (let index = 0; index < STEP_SAMPLES; index++) {
    let started = wallNow();
    const answer = await cluster.s3.client.send(
      new GetObjectCommand({ Bucket: INPUT_BUCKET, Key: TINY_KEY }),
    );
    await writeFile(
      join(scratch, "download"),
      await (answer.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
    );
    download.push(wallNow() - started);
    started = wallNow();
    await probeMedia(localClip);
    probe.push(wallNow() - started);
  }
  return { download: spread(download), probe: spread(probe) };
}

/** Each hop's latency distribution on one NATS setup, in ms from the submit unless named otherwise. */
export interface DispatchLatency {
  jobs: number;
  failed: number;
  /** Jobs that needed more than one attempt. */
  retried: number;
  /** Failed attempts by failure code (warm-up jobs included). */
  failedAttempts: string[];
  /** 201 read by the bench. */
  answered: Spread;
  /** jobs.created_at: the submit transaction. */
  created: Spread;
  /** attempts.dispatched_at: the scheduler's transaction that wrote the lease. */
  dispatched: Spread;
  /** The lease was marked published: the scheduler published it to JetStream right after its commit. */
  leasePublished: Spread;
  /** The agent logged "lease accepted" (after storing its `accepted` report in JetStream). */
  agentAccepted: Spread;
  /** The Manager applied the `accepted` report: attempts.accepted_at, job RUNNING. */
  accepted: Spread;
  /** Its job.updated (QUEUED -> RUNNING) arrived at an SSE subscriber in this process. */
  runningEvent: Spread;
  /** The agent spawned ffmpeg ("encoding"): the input streamed through the relay, ffprobe beside it. */
  ffmpegSpawned: Spread;
  /**
   * Hops: dispatched -> lease published, lease published -> Manager applied accepted (and its
   * two parts: -> the agent stored its report, -> the Manager applied it), accepted -> ffmpeg spawned.
   */
  dispatchedToPublished: Spread;
  publishedToAccepted: Spread;
  publishedToAgentAccepted: Spread;
  agentAcceptedToApplied: Spread;
  acceptedToSpawned: Spread;
}

export interface DispatchResult {
  /** Per NATS setup measured. */
  byNats: Partial<Record<DispatchNats, DispatchLatency>>;
  /** One GET of the clip from s3rver, and one ffprobe of it, on their own. */
  downloadAlone: Spread;
  probeAlone: Spread;
  /** CPU busy on the whole machine while the measured jobs ran, in cores (of `cores`). */
  machineBusyCores: number;
  cores: number;
  seconds: number;
}

/** Per job of one setup, from the submit (or the hop's start) to each step, in ms. */
async function latencyOf(cluster: Cluster, submissions: Submission[]): Promise<DispatchLatency> {
  const times = await cluster.times(submissions.map((submission) => submission.jobId));
  const failedAttempts = await cluster.failedAttempts();
  const rows = submissions.map((submission) => {
    const job = times.get(submission.jobId);
    const since = (at: number | undefined) => (at ?? Number.NaN) - submission.sentAtMs;
    const spawned = logTime(job && cluster.agentLog("encoding", job.attemptId));
    const agentAccepted = logTime(job && cluster.agentLog("lease accepted", job.attemptId));
    return {
      state: job?.state,
      attempts: job?.attempts ?? 0,
      answered: submission.answeredAtMs - submission.sentAtMs,
      created: since(job?.createdMs),
      dispatched: since(job?.dispatchedMs),
      leasePublished: since(job?.leasePublishedMs),
      agentAccepted: since(agentAccepted),
      accepted: since(job?.acceptedMs),
      runningEvent: since(cluster.eventArrival(submission.jobId, "RUNNING")),
      ffmpegSpawned: since(spawned),
      dispatchedToPublished: (job?.leasePublishedMs ?? Number.NaN) - (job?.dispatchedMs ?? Number.NaN),
      publishedToAccepted: (job?.acceptedMs ?? Number.NaN) - (job?.leasePublishedMs ?? Number.NaN),
      publishedToAgentAccepted: agentAccepted - (job?.leasePublishedMs ?? Number.NaN),
      agentAcceptedToApplied: (job?.acceptedMs ?? Number.NaN) - agentAccepted,
      acceptedToSpawned: spawned - (job?.acceptedMs ?? Number.NaN),
    };
  });
  const of = (key: keyof (typeof rows)[number] & keyof DispatchLatency) =>
    spread(rows.map((row) => row[key] as number));
  return {
    jobs: rows.length,
    failed: rows.filter((row) => row.state !== "COMPLETED").length,
    retried: rows.filter((row) => row.attempts > 1).length,
    failedAttempts,
    answered: of("answered"),
    created: of("created"),
    dispatched: of("dispatched"),
    leasePublished: of("leasePublished"),
    agentAccepted: of("agentAccepted"),
    accepted: of("accepted"),
    runningEvent: of("runningEvent"),
    ffmpegSpawned: of("ffmpegSpawned"),
    dispatchedToPublished: of("dispatchedToPublished"),
    publishedToAccepted: of("publishedToAccepted"),
    publishedToAgentAccepted: of("publishedToAgentAccepted"),
    agentAcceptedToApplied: of("agentAcceptedToApplied"),
    acceptedToSpawned: of("acceptedToSpawned"),
  };
}

interface Setup {
  nats: DispatchNats;
  cluster: Cluster;
  localClip: string;
  submissions: Submission[];
}

async function startSetup(context: BenchContext, nats: DispatchNats): Promise<Setup> {
  const cluster = await startCluster(context, {
    name: `dispatch_${nats}`,
    workers: 1,
    watchEvents: true,
    nats: nats === "cluster" ? await startThreeNodeCluster(context) : singleServer(context),
  });
  const localClip = await uploadTinyClip(context, cluster, `dispatch-${nats}`);
  return { nats, cluster, localClip, submissions: [] };
}

export async function benchDispatch(context: BenchContext, attempt: Attempt): Promise<DispatchResult> {
  const settings = context.settings.dispatch;
  const setups: Setup[] = [];
  for (const nats of settings.nats) {
    const setup = await attempt(`dispatch on ${nats} NATS`, () => startSetup(context, nats));
    if (setup) setups.push(setup);
  }
  const [first] = setups;
  if (!first) throw new Error("no NATS setup started");
  const started = Date.now();
  let machineBefore = machineCpuSeconds();
  for (let index = 0; index < WARMUP_JOBS + settings.jobs; index++) {
    if (index === WARMUP_JOBS) machineBefore = machineCpuSeconds();
    for (const setup of setups) {
      const submission = await setup.cluster.submit(tinyPlan(`job-${index}`));
      await setup.cluster.waitForJob(submission.jobId, JOB_TIMEOUT_MS);
      if (index >= WARMUP_JOBS) setup.submissions.push(submission);
      await sleep(GAP_MS);
    }
    const done = index + 1 - WARMUP_JOBS;
    if (done > 0 && done % 10 === 0) context.log(`dispatch: ${done} of ${settings.jobs} jobs done per setup`);
  }
  const machineAfter = machineCpuSeconds();
  const cores = os.cpus().length;
  const seconds = (Date.now() - started) / 1000;
  const byNats: DispatchResult["byNats"] = {};
  for (const setup of setups) byNats[setup.nats] = await latencyOf(setup.cluster, setup.submissions);
  const steps = await timeSteps(
    first.cluster,
    first.localClip,
    await scratchDirectory(context, "dispatch-steps"),
  );
  for (const setup of setups) await setup.cluster.stop();
  return {
    byNats,
    downloadAlone: steps.download,
    probeAlone: steps.probe,
    machineBusyCores:
      (machineAfter.busy - machineBefore.busy) / ((machineAfter.total - machineBefore.total) / cores),
    cores,
    seconds,
  };
}
