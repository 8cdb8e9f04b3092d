/**
 * Overhead: the same 720p transcode of a 60-second clip (a) as a plain ffmpeg command on
 * local files and (b) as a TJM job from S3 to S3 on loopback (s3rver, one Worker agent),
 * in adjacent pairs (plain first, then TJM first, and so on), BENCH_OVERHEAD_RUNS pairs;
 * medians of the wall time, of ffmpeg's own fps and of its CPU time, with how busy the
 * machine was during each run. The plain command is the one the agent builds: worker-agent/src/run/args.ts's
 * buildFfmpegCommand on the plan as the Manager stored it and on probeMedia's description of
 * the clip, only with other local paths.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { ExecutionPlan } from "@tjm/protocol";
import { buildFfmpegCommand } from "../../worker-agent/src/run/args.ts";
import { probeMedia } from "../../worker-agent/src/run/media-info.ts";
import { ProgressParser, type ProgressUpdate } from "../../worker-agent/src/run/progress.ts";
import type { BenchContext } from "../scenario.ts";
import {
  type Cluster,
  INPUT_BUCKET,
  logTime,
  makeClip,
  OUTPUT_BUCKET,
  scratchDirectory,
  startCluster,
  wallNow,
} from "../shared/cluster.ts";
import { cpuSeconds, machineCpuSeconds, reapedChildrenCpuSeconds } from "../shared/proc.ts";
import { median } from "../shared/stats.ts";

const CLIP = { size: "1280x720", rate: 30 } as const;
const WARMUP_SECONDS = 3;
const SOURCE_KEY = "overhead/source.mp4";
const WARMUP_KEY = "overhead/warmup.mp4";
const OUTPUT_ID = "720p";

/** The transcode: H.264 720p at the portable "fast" preset (x264 veryfast, CRF 23) and AAC 128k, in MP4. */
function plan(inputKey: string, run: string): Record<string, unknown> {
  return {
    input: { uri: `s3://${INPUT_BUCKET}/${inputKey}` },
    outputs: [
      {
        id: OUTPUT_ID,
        kind: "FILE",
        container: "mp4",
        destinationUri: `s3://${OUTPUT_BUCKET}/overhead/${run}/${OUTPUT_ID}.mp4`,
        video: { codec: "h264", height: 720, preset: "fast" },
        audio: { codec: "aac", bitrateKbps: 128 },
      },
    ],
  };
}

/** How busy the machine was during a run: others' load skews both contenders alike only if it is steady. */
export interface Contention {
  /** CPU busy on the whole machine during the run, in cores (ffmpeg's own share included). */
  busyCores: number;
  /** The 1-minute load average when the run started. */
  loadAverage: number;
}

/** CPU seconds (user + system) of TJM's own processes over a run. */
export interface PlatformCpu {
  manager: number;
  /** The Worker agent itself, not its children (ffmpeg, ffprobe). */
  agent: number;
  store: number;
}

export const platformTotal = (cpu: PlatformCpu) => cpu.manager + cpu.agent + cpu.store;

export interface RawRun extends Contention {
  seconds: number;
  fps: number;
  speed: number;
  /** ffmpeg's user + system CPU seconds. */
  cpuSeconds: number;
  /** TJM's processes beside the plain command: up, with no job to run. */
  platformCpu: PlatformCpu;
  /** Its output's size, and one PutObject of it to the bench's s3rver from this process (ms). */
  outputBytes: number;
  outputPutMs: number;
}

/** Milliseconds from the submit of a TJM run to each step. */
export interface TjmStages {
  /** The Manager applied the Worker's `accepted` report (attempt RUNNING). */
  accepted: number;
  /** The agent spawned ffmpeg (its "encoding" log line); the input streams in, ffprobe runs beside it. */
  ffmpegSpawned: number;
  /** ffmpeg's last progress message (its `progress=end` block). */
  ffmpegDone: number;
  /** The Manager applied the `completed` report: outputs probed, uploaded to staging, log uploaded. */
  completionAccepted: number;
  /** The job COMPLETED: staged outputs promoted and the manifest written. */
  completed: number;
}

export interface TjmRun extends Contention {
  seconds: number;
  fps: number;
  speed: number;
  /** User + system CPU seconds of the agent's children during the job: ffmpeg and its two ffprobes. */
  cpuSeconds: number;
  /** TJM's own processes during the job. */
  platformCpu: PlatformCpu;
  /** ffmpeg's own run inside the agent: spawned to last progress. */
  ffmpegSeconds: number;
  stages: TjmStages;
  state: string;
  attempts: number;
}

export interface OverheadResult {
  clipSeconds: number;
  clipSize: string;
  clipRate: number;
  clipBytes: number;
  /** ffmpeg's arguments, with <input> and <output> for the local paths. */
  args: string[];
  raw: RawRun[];
  tjm: TjmRun[];
  rawSeconds: number;
  tjmSeconds: number;
  rawFps: number;
  tjmFps: number;
  rawCpuSeconds: number;
  tjmCpuSeconds: number;
  /** Median over the runs of TJM / plain within each adjacent pair (both ran under about the same load). */
  pairedWallRatio: number;
  pairedFpsRatio: number;
  stageMedians: TjmStages;
  ffmpegInAgentSeconds: number;
  /** The plain runs' output PUT alone: the store's own share of the step after ffmpeg. */
  outputPutMs: number;
}

/** Starts watching the machine; the returned function tells how busy it was since. */
function watchMachine(): () => Contention {
  const before = machineCpuSeconds().busy;
  const started = performance.now();
  const loadAverage = os.loadavg()[0] ?? Number.NaN;
  return () => ({
    busyCores: (machineCpuSeconds().busy - before) / ((performance.now() - started) / 1000),
    loadAverage,
  });
}

/** Starts metering TJM's own processes; the returned function tells their CPU seconds since. */
function meterPlatform(cluster: Cluster): () => PlatformCpu {
  const pids = {
    manager: cluster.manager.pids,
    agent: cluster.agents.map((agent) => agent.child.pid as number),
    store: [cluster.s3.pid],
  };
  const read = (): PlatformCpu => ({
    manager: cpuSeconds(pids.manager),
    agent: cpuSeconds(pids.agent),
    store: cpuSeconds(pids.store),
  });
  const before = read();
  return () => {
    const after = read();
    return {
      manager: after.manager - before.manager,
      agent: after.agent - before.agent,
      store: after.store - before.store,
    };
  };
}

/** One PutObject of a local file to s3rver, timed from the request to the answer (the file read first). */
async function timedPut(cluster: Cluster, path: string, key: string): Promise<number> {
  const body = await readFile(path);
  const started = performance.now();
  await cluster.s3.client.send(new PutObjectCommand({ Bucket: OUTPUT_BUCKET, Key: key, Body: body }));
  return performance.now() - started;
}

async function runRaw(
  cluster: Cluster,
  args: string[],
  expectedDurationMs: number | undefined,
  logPath: string,
): Promise<Omit<RawRun, "outputBytes" | "outputPutMs">> {
  const machine = watchMachine();
  const platform = meterPlatform(cluster);
  // ffmpeg is this process's only child that ends meanwhile, so the growth of cutime + cstime is its CPU.
  const cpuBefore = reapedChildrenCpuSeconds([process.pid]);
  const started = wallNow();
  const child = spawn("ffmpeg", args, { stdio: ["ignore", "pipe", "pipe"] });
  const parser = new ProgressParser(expectedDurationMs);
  let last: ProgressUpdate | undefined;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    for (const update of parser.push(chunk)) last = update;
  });
  const log = createWriteStream(logPath);
  child.stderr.pipe(log);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  const seconds = (wallNow() - started) / 1000;
  if (code !== 0) throw new Error(`plain ffmpeg exited with ${code}; its log is ${logPath}`);
  return {
    seconds,
    fps: last?.fps ?? Number.NaN,
    speed: last?.speed ?? Number.NaN,
    cpuSeconds: reapedChildrenCpuSeconds([process.pid]) - cpuBefore,
    platformCpu: platform(),
    ...machine(),
  };
}

async function runTjm(cluster: Cluster, inputKey: string, run: string, timeoutMs: number): Promise<TjmRun> {
  const agentPids = cluster.agents.map((agent) => agent.child.pid as number);
  const machine = watchMachine();
  const cpuBefore = reapedChildrenCpuSeconds(agentPids);
  const platform = meterPlatform(cluster);
  const submission = await cluster.submit(plan(inputKey, run));
  const state = await cluster.waitForJob(submission.jobId, timeoutMs, 100);
  const contention = machine();
  const ffmpegCpuSeconds = reapedChildrenCpuSeconds(agentPids) - cpuBefore;
  const platformCpu = platform();
  const times = (await cluster.times([submission.jobId])).get(submission.jobId);
  if (!times) throw new Error(`job ${submission.jobId} vanished`);
  const spawned = logTime(cluster.agentLog("encoding", times.attemptId));
  const progress = cluster.progress(times.attemptId);
  const ffmpegDone = progress ? Date.parse(progress.last.at) : Number.NaN;
  const since = (at: number) => at - submission.sentAtMs;
  return {
    seconds: since(times.completedMs) / 1000,
    fps: progress?.last.fps ?? Number.NaN,
    speed: progress?.last.speed ?? Number.NaN,
    ffmpegSeconds: (ffmpegDone - spawned) / 1000,
    cpuSeconds: ffmpegCpuSeconds,
    platformCpu,
    ...contention,
    stages: {
      accepted: since(times.acceptedMs),
      ffmpegSpawned: since(spawned),
      ffmpegDone: since(ffmpegDone),
      completionAccepted: since(times.completionAcceptedMs),
      completed: since(times.completedMs),
    },
    state,
    attempts: times.attempts,
  };
}

export async function benchOverhead(context: BenchContext): Promise<OverheadResult> {
  const { runs, clipSeconds } = context.settings.overhead;
  const scratch = await scratchDirectory(context, "overhead-files");
  const source = join(scratch, "source.mp4");
  const warmup = join(scratch, "warmup.mp4");
  const generating = wallNow();
  await makeClip(source, { seconds: clipSeconds, ...CLIP });
  await makeClip(warmup, { seconds: WARMUP_SECONDS, ...CLIP });
  context.log(
    `overhead: ${clipSeconds} s ${CLIP.size} clip made in ${((wallNow() - generating) / 1000).toFixed(1)} s`,
  );

  const cluster = await startCluster(context, { name: "overhead", workers: 1 });
  await cluster.s3.put(INPUT_BUCKET, SOURCE_KEY, source);
  await cluster.s3.put(INPUT_BUCKET, WARMUP_KEY, warmup);
  const timeoutMs = 120_000 + clipSeconds * 20_000;

  // One short job first (unmeasured): the agent's first S3 client, the Manager's first
  // promotion. Its stored plan is what the plain command is built from.
  const warm = await cluster.submit(plan(WARMUP_KEY, "warmup"));
  const warmState = await cluster.waitForJob(warm.jobId, timeoutMs, 100);
  if (warmState !== "COMPLETED") throw new Error(`the warm-up job ended ${warmState}`);
  const storedPlan = (await cluster.storedPlan(warm.jobId)) as unknown as ExecutionPlan;
  const info = await probeMedia(source);
  const output = join(scratch, `output-${OUTPUT_ID}.mp4`);
  const command = buildFfmpegCommand({
    plan: storedPlan,
    pool: "cpu",
    input: { path: source, info },
    subtitlePaths: [],
    outputPaths: { [OUTPUT_ID]: output },
  });
  const args = command.args.map((arg) => (arg === source ? "<input>" : arg === output ? "<output>" : arg));
  context.log(`overhead: ffmpeg ${args.join(" ")}`);

  const raw: RawRun[] = [];
  const tjm: TjmRun[] = [];
  const plainRun = async (run: number) => {
    const ran = await runRaw(
      cluster,
      command.args,
      command.expectedDurationMs,
      join(scratch, `raw-${run}.log`),
    );
    const plain: RawRun = {
      ...ran,
      outputBytes: (await stat(output)).size,
      outputPutMs: await timedPut(cluster, output, `overhead/plain-${run}/${OUTPUT_ID}.mp4`),
    };
    raw.push(plain);
    context.log(
      `overhead: plain ffmpeg run ${run}: ${plain.seconds.toFixed(2)} s, ${plain.fps} fps, ${plain.cpuSeconds.toFixed(1)} CPU s, machine ${plain.busyCores.toFixed(2)} cores busy`,
    );
  };
  const tjmRun = async (run: number) => {
    const job = await runTjm(cluster, SOURCE_KEY, `run-${run}`, timeoutMs);
    if (job.state !== "COMPLETED") throw new Error(`TJM run ${run} ended ${job.state}`);
    tjm.push(job);
    context.log(
      `overhead: TJM run ${run}: ${job.seconds.toFixed(2)} s, ${job.fps} fps (ffmpeg ${job.ffmpegSeconds.toFixed(2)} s), ${job.cpuSeconds.toFixed(1)} CPU s, machine ${job.busyCores.toFixed(2)} cores busy`,
    );
  };
  // Plain first in odd runs, TJM first in even ones: a load that drifts over minutes then
  // favours neither.
  for (let run = 1; run <= runs; run++) {
    if (run % 2 === 1) {
      await plainRun(run);
      await tjmRun(run);
    } else {
      await tjmRun(run);
      await plainRun(run);
    }
  }
  await cluster.stop();
  const stage = (key: keyof TjmStages) => median(tjm.map((run) => run.stages[key]));
  return {
    clipSeconds,
    clipSize: CLIP.size,
    clipRate: CLIP.rate,
    clipBytes: (await stat(source)).size,
    args,
    raw,
    tjm,
    rawSeconds: median(raw.map((run) => run.seconds)),
    tjmSeconds: median(tjm.map((run) => run.seconds)),
    rawFps: median(raw.map((run) => run.fps)),
    tjmFps: median(tjm.map((run) => run.fps)),
    rawCpuSeconds: median(raw.map((run) => run.cpuSeconds)),
    tjmCpuSeconds: median(tjm.map((run) => run.cpuSeconds)),
    pairedWallRatio: median(tjm.map((run, index) => run.seconds / (raw[index]?.seconds ?? Number.NaN))),
    pairedFpsRatio: median(tjm.map((run, index) => run.fps / (raw[index]?.fps ?? Number.NaN))),
    stageMedians: {
      accepted: stage("accepted"),
      ffmpegSpawned: stage("ffmpegSpawned"),
      ffmpegDone: stage("ffmpegDone"),
      completionAccepted: stage("completionAccepted"),
      completed: stage("completed"),
    },
    ffmpegInAgentSeconds: median(tjm.map((run) => run.ffmpegSeconds)),
    outputPutMs: median(raw.map((run) => run.outputPutMs)),
  };
}
