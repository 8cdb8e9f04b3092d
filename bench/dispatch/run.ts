/**
 * Dispatch latency: one idle Worker agent, one-second jobs submitted one at a time (each
 * waits for the previous to be COMPLETED and the Worker to be idle again). Per job, from the
 * moment the bench sent the POST: the Manager applying the Worker's `accepted` report
 * (attempts.accepted_at, where the job goes QUEUED -> RUNNING and job.updated is announced)
 * and the agent spawning ffmpeg (its "encoding" log line), with the hops in between.
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { probeMedia } from "../../worker-agent/src/run/media-info.ts";
import type { BenchContext } from "../scenario.ts";
import {
  type Cluster,
  INPUT_BUCKET,
  logTime,
  scratchDirectory,
  startCluster,
  wallNow,
} from "../shared/cluster.ts";
import { machineCpuSeconds } from "../shared/proc.ts";
import { type Spread, spread } from "../shared/stats.ts";
import { TINY_KEY, tinyPlan, uploadTinyClip } from "../shared/tiny-job.ts";

/** Unmeasured jobs first: JIT, connection pools, the agent's first S3 client. */
const WARMUP_JOBS = 3;
/** Idle time between jobs, so every job finds the Worker idle and the Manager quiet. */
const GAP_MS = 200;
const JOB_TIMEOUT_MS = 60_000;
const STEP_SAMPLES = 20;

/**
 * What part of accepted -> ffmpeg spawned two of its steps take on their own here: one GET
 * of the clip from s3rver (from this process, to a file) and one ffprobe of it.
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

/** Each hop's latency distribution, in ms from the submit unless named otherwise. */
export interface DispatchResult {
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
  /** The relay's transaction that published the lease to JetStream began. */
  leasePublished: Spread;
  /** The agent logged "lease accepted" (after storing its `accepted` report in JetStream). */
  agentAccepted: Spread;
  /** The Manager applied the `accepted` report: attempts.accepted_at, job RUNNING. */
  accepted: Spread;
  /** Its job.updated (QUEUED -> RUNNING) arrived at an SSE subscriber in this process. */
  runningEvent: Spread;
  /** The agent spawned ffmpeg ("encoding"): input downloaded and probed, `started` reported. */
  ffmpegSpawned: Spread;
  /** Hops: dispatched -> lease published, lease published -> Manager applied accepted, accepted -> ffmpeg spawned. */
  dispatchedToPublished: Spread;
  publishedToAccepted: Spread;
  acceptedToSpawned: Spread;
  /** One GET of the clip from s3rver, and one ffprobe of it, on their own. */
  downloadAlone: Spread;
  probeAlone: Spread;
  /** CPU busy on the whole machine while the measured jobs ran, in cores (of `cores`). */
  machineBusyCores: number;
  cores: number;
  seconds: number;
}

export async function benchDispatch(context: BenchContext): Promise<DispatchResult> {
  const measured = context.settings.dispatch.jobs;
  const cluster = await startCluster(context, { name: "dispatch", workers: 1, watchEvents: true });
  const localClip = await uploadTinyClip(context, cluster, "dispatch");
  const started = Date.now();
  const submissions = [];
  let machineBefore = machineCpuSeconds();
  for (let index = 0; index < WARMUP_JOBS + measured; index++) {
    if (index === WARMUP_JOBS) machineBefore = machineCpuSeconds();
    const submission = await cluster.submit(tinyPlan(`job-${index}`));
    await cluster.waitForJob(submission.jobId, JOB_TIMEOUT_MS);
    if (index >= WARMUP_JOBS) submissions.push(submission);
    if (submissions.length > 0 && submissions.length % 10 === 0)
      context.log(`dispatch: ${submissions.length} of ${measured} jobs done`);
    await sleep(GAP_MS);
  }
  const machineAfter = machineCpuSeconds();
  const cores = os.cpus().length;
  const seconds = (Date.now() - started) / 1000;
  const times = await cluster.times(submissions.map((submission) => submission.jobId));
  const failedAttempts = await cluster.failedAttempts();
  const steps = await timeSteps(cluster, localClip, await scratchDirectory(context, "dispatch-steps"));
  await cluster.stop();

  const rows = submissions.map((submission) => {
    const job = times.get(submission.jobId);
    const since = (at: number | undefined) => (at ?? Number.NaN) - submission.sentAtMs;
    const spawned = logTime(job && cluster.agentLog("encoding", job.attemptId));
    return {
      state: job?.state,
      attempts: job?.attempts ?? 0,
      answered: submission.answeredAtMs - submission.sentAtMs,
      created: since(job?.createdMs),
      dispatched: since(job?.dispatchedMs),
      leasePublished: since(job?.leasePublishedMs),
      agentAccepted: since(logTime(job && cluster.agentLog("lease accepted", job.attemptId))),
      accepted: since(job?.acceptedMs),
      runningEvent: since(cluster.eventArrival(submission.jobId, "RUNNING")),
      ffmpegSpawned: since(spawned),
      dispatchedToPublished: (job?.leasePublishedMs ?? Number.NaN) - (job?.dispatchedMs ?? Number.NaN),
      publishedToAccepted: (job?.acceptedMs ?? Number.NaN) - (job?.leasePublishedMs ?? Number.NaN),
      acceptedToSpawned: spawned - (job?.acceptedMs ?? Number.NaN),
    };
  });
  const of = (key: keyof (typeof rows)[number] & keyof DispatchResult) =>
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
    acceptedToSpawned: of("acceptedToSpawned"),
    downloadAlone: steps.download,
    probeAlone: steps.probe,
    machineBusyCores:
      (machineAfter.busy - machineBefore.busy) / ((machineAfter.total - machineBefore.total) / cores),
    cores,
    seconds,
  };
}
