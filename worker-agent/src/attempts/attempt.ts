/**
 * One attempt on this Worker, from an accepted lease to its last report: the input streamed
 * to ffprobe and ffmpeg through the loopback relay (downloaded when the stream fails or reads
 * too much), ffprobe running beside ffmpeg rather than before it (only a plan that needs its
 * facts to build the command waits for it), watermark and subtitle files downloaded first,
 * one ffmpeg run for every output, outputs uploaded with resumable multipart uploads (those
 * ffmpeg writes front to back while it writes them, output-uploads.ts) while they are
 * described (output-description.ts) (where the lease says: completed at an attempt-scoped
 * staging key, or left incomplete at the destination for the Manager to commit), the ffmpeg
 * log to logsUri, then `completed`. When storage stays down while the attempt reads its
 * input, the read waits for it (input-wait.ts) and the attempt reports `input-waiting` and
 * `input-resumed`: ffmpeg is held on its read and goes on where it stopped. When storage stays
 * down past the uploader's retry budget it reports `upload-paused` and keeps the encoded
 * files until `resume-uploads` (or a cancel). Nothing here throws to the caller: every ending
 * is a report.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import { type Logger, withFields } from "@tjm/platform";
import {
  type ExecutionPlan,
  type LeaseCommand,
  messageLimits,
  type OutputResult,
  type Report,
  type ReportBody,
  type WorkerPool,
} from "@tjm/protocol";
import { DEFAULT_RETRY, MAX_PARTS } from "@tjm/storage";
import type { WorkerMetrics } from "../metrics/worker-metrics.ts";
import { buildFfmpegCommand, checkStreams, type FfmpegCommand, probeFactsNeeded } from "../run/args.ts";
import { FfmpegFailedError, type RunningFfmpeg, startFfmpeg } from "../run/ffmpeg-process.ts";
import { InputUnreadableError, type MediaInfo, probeMedia } from "../run/media-info.ts";
import { describeOutput, type OutputDescription } from "../run/output-description.ts";
import { missingStreamError } from "../run/plan-errors.ts";
import type { ProgressUpdate } from "../run/progress.ts";
import { retimeSubtitles } from "../run/subtitle-retime.ts";
import {
  createS3Client,
  downloadObject,
  InputRelay,
  putSmallObject,
  type RelayProblem,
  type RetryPolicy,
  StorageUnavailableError,
} from "../storage/index.ts";
import { InputWait, type InputWaitEnd, type InputWaitState } from "../storage/input-wait.ts";
import { MAX_PARTS_IN_FLIGHT } from "../storage/part-size.ts";
import { describeFailure } from "./failures.ts";
import { OutputUploads, type UploadedOutput } from "./output-uploads.ts";
import type { AttemptRecord, AttemptRecords, EncodedOutput } from "./records.ts";

export interface AttemptEnvironment {
  pool: WorkerPool;
  ffmpegPath: string | undefined;
  ffprobePath: string | undefined;
  records: AttemptRecords;
  logger: Logger;
  /** Publishes a report of this attempt (JetStream); resolves once stored, retrying meanwhile. */
  report<T extends Report["type"]>(lease: LeaseCommand, type: T, body: ReportBody<T>): Promise<void>;
  /** Publishes a progress update (core NATS, at most twice a second). */
  progress(lease: LeaseCommand, update: ProgressUpdate): void;
  /** Storage retry budget before an upload pauses or a read of the input waits (tests shorten it). */
  storageRetry?: Partial<RetryPolicy>;
  /** The longest one storage outage is waited out while reading the input (WORKER_INPUT_WAIT_MAX_MS). */
  inputWaitMaxMs?: number;
  /**
   * Every output's part size (unset: from its plan) and the most parts of one output in flight
   * (unset: MAX_PARTS_IN_FLIGHT).
   */
  uploadParts?: { partSize?: number; concurrency: number };
  /** False: the input is downloaded before ffmpeg starts instead of streamed (WORKER_INPUT_STREAMING). */
  streamInput?: boolean;
  /** How long ffmpeg gets after SIGTERM before SIGKILL. */
  killGraceMs?: number;
  /** Unset when the agent serves no metrics. */
  metrics?: WorkerMetrics;
}

/** Like the retention of outputs waiting for storage: an outage of a day is waited out. */
const DEFAULT_INPUT_WAIT_MAX_MS = 24 * 60 * 60 * 1000;

const EXTENSIONS: Record<string, string> = { mp4: "mp4", mov: "mov", mkv: "mkv", webm: "webm", mpegts: "ts" };

/**
 * ffmpeg's http reader on the relay: a dropped connection or a 5xx is retried from the same
 * offset, with waits of 0, 1 and 2 s, before the read fails and the attempt downloads instead.
 */
const STREAM_INPUT_OPTIONS = [
  ...["-reconnect", "1", "-reconnect_on_network_error", "1"],
  ...["-reconnect_on_http_error", "5xx", "-reconnect_delay_max", "2"],
];

/** What ffmpeg reads: the relay's URL or the downloaded file. */
interface EncodeInput {
  path: string;
  options?: readonly string[];
  streamed: boolean;
}

/** The input's ffprobe, settled either way: it runs beside ffmpeg and is awaited only when needed. */
type ProbeOutcome = { info: MediaInfo } | { error: unknown };

/**
 * ffmpeg prints "<input>: <error>" when a read of its input fails. At the opening it then
 * exits 1; mid-encode it takes the error for the input's end and exits 0 with short outputs.
 */
function readErrorIn(stderr: string, url: string): boolean {
  return stderr.split("\n").some((line) => line.startsWith(`${url}: `));
}

class Cancelled extends Error {
  override name = "Cancelled";
}

export class Attempt {
  private readonly abort = new AbortController();
  /** Made on first use: see `client`. */
  private s3Client: S3Client | undefined;
  private s3BodyClient: S3Client | undefined;
  private outputUploads: OutputUploads | undefined;
  private ffmpeg: RunningFfmpeg | undefined;
  private resumeWaiter: (() => void) | undefined;
  /** Made on first use, like the S3 client. */
  private storageWait: InputWait | undefined;
  private cancelled = false;
  private waitingForInput = false;
  private stopping = false;
  private ending = false;
  /** Resolves once the attempt has ended (reported) or stopped with the agent. */
  readonly done: Promise<void>;
  /** Every line of this attempt carries its job's and its own id. */
  private readonly log: Logger;

  /**
   * `drop`: a previous instance's attempt the Manager no longer counts as this Worker's: its
   * unfinished uploads are aborted and its files deleted, and nothing is reported.
   */
  constructor(
    private readonly env: AttemptEnvironment,
    private record: AttemptRecord,
    mode: "run" | "drop" = "run",
    /**
     * Without it the run starts at once. With it, once it resolves, or when the attempt is
     * cancelled or stopped first (the run then only cleans up: a stop must not wait on a report
     * NATS cannot take); rejected first (the agent stopped), the run never starts.
     */
    startAfter?: Promise<unknown>,
  ) {
    this.log = withFields(env.logger, { jobId: record.lease.jobId, attemptId: record.lease.attemptId });
    this.done = (
      mode === "drop"
        ? this.discard({ abortUploads: true })
        : startAfter
          ? Promise.race([startAfter, this.aborted()]).then(
              () => this.run(),
              () => undefined,
            )
          : this.run()
    )
      .catch((err) => this.log.error("attempt ended without its last report", { err }))
      .finally(() => {
        this.s3Client?.destroy();
        this.s3BodyClient?.destroy();
      });
  }

  private aborted(): Promise<void> {
    return new Promise((resolve) =>
      this.abort.signal.addEventListener("abort", () => resolve(), { once: true }),
    );
  }

  /*
   * The S3 client and the uploads are made when first needed, after the run's first await: made
   * here they took about a millisecond of the lease's synchronous turn, and the `accepted` report,
   * queued in that turn, reached NATS only after it.
   */
  private get client(): S3Client {
    this.s3Client ??= createS3Client(this.record.lease.storage);
    return this.s3Client;
  }

  /** For the uploads' bodies: under Bun, fetch sends them with a third of node:http's CPU (client.ts). */
  private get bodyClient(): S3Client {
    if (!process.versions.bun) return this.client;
    this.s3BodyClient ??= createS3Client(this.record.lease.storage, {}, "fetch");
    return this.s3BodyClient;
  }

  /** Where every read of what the attempt encodes from waits out a storage outage. */
  private get inputWait(): InputWait {
    this.storageWait ??= this.createInputWait();
    return this.storageWait;
  }

  private createInputWait(): InputWait {
    const policy = { ...DEFAULT_RETRY, ...this.env.storageRetry };
    return new InputWait({
      limitMs: this.env.inputWaitMaxMs ?? DEFAULT_INPUT_WAIT_MAX_MS,
      // A round is the retry budget itself; the pause after it is no longer than the budget.
      pauseMs: Math.max(1, Math.min(policy.maxDelayMs, policy.budgetMs)),
      signal: this.abort.signal,
      onChange: (state, ended) => this.inputWaitChanged(state, ended),
    });
  }

  /**
   * Reported, not awaited (as `started`): the registry sends this attempt's reports in order,
   * and the read goes on while NATS takes it.
   */
  private inputWaitChanged(state: InputWaitState | undefined, ended: InputWaitEnd | undefined): void {
    if (state) {
      if (!this.waitingForInput) this.env.metrics?.inputWaitChanged(true);
      this.waitingForInput = true;
      this.log.warn("storage unavailable; the encode waits for its input", {
        since: state.since.toISOString(),
        lastError: state.lastError,
      });
      this.env
        .report(this.lease, "input-waiting", { since: state.since.toISOString(), lastError: state.lastError })
        .catch((err) => this.log.warn("cannot report input-waiting", { err }));
      return;
    }
    this.env.metrics?.inputWaitChanged(false);
    this.waitingForInput = false;
    // A wait that ran out fails the attempt, a cancelled one ends it: either report says so.
    if (ended !== "answered") return;
    this.log.info("storage answers again; the encode goes on");
    this.env
      .report(this.lease, "input-resumed", {})
      .catch((err) => this.log.warn("cannot report input-resumed", { err }));
  }

  private get uploads(): OutputUploads {
    this.outputUploads ??= this.createUploads();
    return this.outputUploads;
  }

  private createUploads(): OutputUploads {
    const { lease } = this.record;
    const multipartCommit = lease.commit === "multipart";
    return new OutputUploads({
      client: this.client,
      bodyClient: this.bodyClient,
      uri: (outputId) => this.uploadUri(outputId),
      statePath: (outputId) => this.env.records.uploadStatePath(lease.attemptId, outputId),
      // Multipart: only the Manager completes each upload, with the part list the report carries.
      complete: !multipartCommit,
      partLimit: multipartCommit
        ? Math.min(
            lease.storage.maxParts ?? MAX_PARTS,
            Math.floor(messageLimits.reportParts / lease.plan.outputs.length),
          )
        : lease.storage.maxParts,
      partSize: this.env.uploadParts?.partSize,
      concurrency: this.env.uploadParts?.concurrency ?? MAX_PARTS_IN_FLIGHT,
      ...this.retry,
      meter: this.env.metrics,
    });
  }

  get lease(): LeaseCommand {
    return this.record.lease;
  }

  /** Waiting for resume-uploads: its files are kept but it uses no encoding slot. */
  get paused(): boolean {
    return this.record.phase === "paused";
  }

  /**
   * Its last report is on its way, or the Manager cancelled it: it no longer takes a slot. The
   * Manager may lease the next job as soon as it applies that report, and leases the next one
   * right after a cancel it sends for a lost Worker's attempt (that Worker restarted and went on
   * with it), before the files are gone.
   */
  get finishing(): boolean {
    return this.ending || this.cancelled;
  }

  /** Kill ffmpeg, abort uploads, delete the files, report `cancelled`. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.abort.abort(new Cancelled("the Manager cancelled the attempt"));
    this.ffmpeg?.cancel();
    this.resumeWaiter?.();
  }

  /** resume-uploads: true when the attempt was waiting for it. */
  resume(): boolean {
    if (!this.resumeWaiter) return false;
    this.resumeWaiter();
    return true;
  }

  /**
   * The agent is stopping: encoding is lost (the Manager fails it as WORKER_LOST), encoded
   * outputs and upload state stay on disk for the next instance.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort(new Cancelled("the Worker is stopping"));
    this.ffmpeg?.cancel();
    this.resumeWaiter?.();
    await this.done;
  }

  private get directory(): string {
    return join(this.record.directory, this.lease.attemptId);
  }

  private get retry() {
    return { signal: this.abort.signal, retry: this.env.storageRetry, logger: this.log };
  }

  private async run(): Promise<void> {
    let phase: "input" | "encode" | "upload" = "input";
    try {
      if (this.record.phase === "encoding") {
        await this.encode((next) => {
          phase = next;
        });
      }
      phase = "upload";
      if (this.record.phase === "paused") await this.waitForResume(this.resumeRequested());
      const outputs = await this.uploadAll();
      this.ending = true;
      this.env.metrics?.attemptEnded("succeeded");
      await this.env.report(this.lease, "completed", { outputs, logsUri: this.lease.logsUri });
      this.log.info("attempt completed", { attemptId: this.lease.attemptId, jobId: this.lease.jobId });
      await this.discard({ abortUploads: false });
    } catch (err) {
      if (this.stopping) {
        // Outputs uploading while written are incomplete: the next attempt starts over.
        if (this.record.phase === "encoding") await this.discard({ abortUploads: true });
        return;
      }
      if (this.cancelled) {
        await this.discard({ abortUploads: true });
        this.ending = true;
        this.env.metrics?.attemptEnded("cancelled");
        await this.env.report(this.lease, "cancelled", {});
        this.log.info("attempt cancelled", { attemptId: this.lease.attemptId });
        return;
      }
      const failure = describeFailure(err, phase);
      this.log.warn("attempt failed", { attemptId: this.lease.attemptId, ...failure, err });
      const logsUri = await this.uploadLog().then(
        () => this.lease.logsUri,
        () => undefined,
      );
      await this.discard({ abortUploads: true });
      this.ending = true;
      this.env.metrics?.attemptEnded("failed");
      await this.env.report(this.lease, "failed", { ...failure, ...(logsUri ? { logsUri } : {}) });
    }
  }

  private async encode(entering: (phase: "input" | "encode") => void): Promise<void> {
    const { plan } = this.lease;
    const signal = this.abort.signal;
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    const outputPaths = Object.fromEntries(
      plan.outputs.map((output) => [
        output.id,
        join(this.directory, `output-${output.id}.${EXTENSIONS[output.container]}`),
      ]),
    );
    const relay = await InputRelay.open(this.client, plan.input.uri, {
      retry: { retry: this.env.storageRetry, logger: this.log },
      signal,
      wait: this.inputWait,
      onProblem: (problem) => {
        // Ranges refused or reads in excess: ffmpeg would only fail slowly on the relay's 503s.
        if (problem.kind !== "read-error") this.ffmpeg?.cancel();
      },
    });
    try {
      let input: EncodeInput =
        this.env.streamInput === false
          ? await this.downloadInput()
          : { path: relay.url, options: STREAM_INPUT_OPTIONS, streamed: true };
      let probe = this.probe(input);
      const [subtitlePaths, watermarkPath] = await Promise.all([
        this.downloadSubtitles(plan),
        this.downloadWatermark(plan),
      ]);
      // Most plans build their command from stream specifiers alone; the few that need a fact
      // of the input (args.ts's probeFactsNeeded) wait for the probe, and only they.
      const needed = probeFactsNeeded(plan);
      let info: MediaInfo | undefined;
      if (needed !== undefined) {
        this.log.info("waiting for the input's probe before encoding", { reason: needed });
        ({ input, probe, info } = await this.probed(input, probe, relay));
        await this.retimeSubtitles(plan, subtitlePaths, info);
      }
      signal.throwIfAborted();

      entering("encode");
      const command = (source: EncodeInput) =>
        buildFfmpegCommand({
          plan,
          pool: this.env.pool,
          input: {
            path: source.path,
            ...(source.options ? { options: source.options } : {}),
            ...(info ? { info } : {}),
          },
          subtitlePaths,
          ...(watermarkPath ? { watermarkPath } : {}),
          outputPaths,
        });
      const first = command(input);
      // Not awaited: the registry sends this attempt's reports in order, so `started` still
      // follows `accepted` and precedes `encoded`.
      this.env
        .report(this.lease, "started", {})
        .catch((err) => this.log.warn("cannot report started", { err }));
      const problem = await this.encodeOnce(
        first,
        input.streamed ? relay : undefined,
        probe,
        info,
        outputPaths,
      );
      if (problem) {
        this.log.warn("the input stream failed; downloading the input and encoding again", {
          problem,
          ...relay.measures,
        });
        const local = await this.downloadInput();
        probe = info ? Promise.resolve({ info }) : this.probe(local);
        await this.encodeOnce(command(local), undefined, probe, info, outputPaths);
      } else if (input.streamed) {
        this.log.info("input streamed", { ...relay.measures });
      }
    } finally {
      await relay.close();
    }

    this.record = {
      ...this.record,
      phase: "uploading",
      outputs: plan.outputs.map((output) => ({ id: output.id, path: outputPaths[output.id] as string })),
    };
    await this.env.records.save(this.record);
    // Not awaited, as `started`: the uploads need only the record on disk, and the registry
    // still sends `encoded` before `completed`.
    this.env
      .report(this.lease, "encoded", {})
      .catch((err) => this.log.warn("cannot report encoded", { err }));
  }

  /** Starts ffprobe on what ffmpeg reads; nothing waits for it unless it must. */
  private probe(input: EncodeInput): Promise<ProbeOutcome> {
    return probeMedia(input.path, { ffprobePath: this.env.ffprobePath }).then(
      (info) => ({ info }),
      (error: unknown) => ({ error }),
    );
  }

  /**
   * The probe's facts, for a plan that needs them before ffmpeg starts. Any trouble with the
   * stream (a read from the store failed, Range refused, more read than the object holds)
   * downloads the input instead, and the encode reads the local file.
   */
  private async probed(
    input: EncodeInput,
    probe: Promise<ProbeOutcome>,
    relay: InputRelay,
  ): Promise<{ input: EncodeInput; probe: Promise<ProbeOutcome>; info: MediaInfo }> {
    let outcome = await probe;
    this.abort.signal.throwIfAborted();
    const problem = input.streamed ? relay.problem : undefined;
    if (problem !== undefined) {
      this.log.warn("the input cannot be streamed; downloading it", { problem, ...relay.measures });
      input = await this.downloadInput();
      if ("error" in outcome) {
        probe = this.probe(input);
        outcome = await probe;
      }
    }
    if ("error" in outcome) throw outcome.error;
    return { input, probe, info: outcome.info };
  }

  private async downloadInput(): Promise<EncodeInput> {
    const path = join(this.directory, "input");
    await this.inputWait.run(() => downloadObject(this.client, this.lease.plan.input.uri, path, this.retry));
    return { path, streamed: false };
  }

  /**
   * One ffmpeg run with its outputs uploading while they are written. Outputs it leaves
   * complete are checked against what went up; those of a run that failed stay for the
   * attempt's discard, those of a run encoded again are aborted first.
   */
  /**
   * One ffmpeg run with its outputs' uploads beside it. The part sizes are fixed at the spawn
   * from what is known then: the probe's facts only when the plan waited for them.
   */
  private async encodeOnce(
    command: FfmpegCommand,
    relay: InputRelay | undefined,
    probe: Promise<ProbeOutcome>,
    info: MediaInfo | undefined,
    outputPaths: Readonly<Record<string, string>>,
  ): Promise<RelayProblem | undefined> {
    const { outputs } = this.lease.plan;
    this.uploads.begin({
      outputs,
      paths: outputPaths,
      durationMs: command.expectedDurationMs ?? info?.durationMs,
      sourceHeight: info?.video?.height,
    });
    let problem: RelayProblem | undefined;
    try {
      problem = await this.runFfmpeg(command, relay, probe);
    } catch (error) {
      await this.uploads.stop();
      throw error;
    }
    if (problem) await this.uploads.abandon(outputs.map((output) => output.id));
    else await this.uploads.finish();
    return problem;
  }

  /**
   * Runs one ffmpeg. With a relay: resolves to the relay's problem when the stream failed
   * ffmpeg (it exited with an error, or printed a read error on its input, which it takes for
   * the end of the input: the output would be short), undefined when the encode is good.
   */
  private async runFfmpeg(
    command: FfmpegCommand,
    relay: InputRelay | undefined,
    probe: Promise<ProbeOutcome>,
  ): Promise<RelayProblem | undefined> {
    const meter = this.env.metrics?.encodeMeter();
    this.ffmpeg = startFfmpeg({
      ...(this.env.ffmpegPath ? { ffmpegPath: this.env.ffmpegPath } : {}),
      args: command.args,
      expectedDurationMs: command.expectedDurationMs,
      logPath: this.record.logPath,
      onProgress: (update) => {
        // Throttled, but ffmpeg's last block always comes through: the frame count ends exact.
        meter?.observe(update);
        this.env.progress(this.lease, update);
      },
      ...(this.env.killGraceMs !== undefined ? { killGraceMs: this.env.killGraceMs } : {}),
    });
    const running = this.ffmpeg;
    // Without a cut the output is as long as the input: ffmpeg prints that itself, and the
    // probe tells it if it lands first.
    if (command.expectedDurationMs === undefined)
      void probe.then((outcome) => {
        if ("info" in outcome) running.expectDuration(outcome.info.durationMs);
      });
    this.log.info("encoding", {
      attemptId: this.lease.attemptId,
      pid: this.ffmpeg.pid,
      expectedDurationMs: command.expectedDurationMs,
      streamed: relay !== undefined,
    });
    if (this.abort.signal.aborted || (relay?.problem && relay.problem.kind !== "read-error"))
      this.ffmpeg.cancel();
    try {
      const result = await this.ffmpeg.done.finally(() => meter?.end());
      if (relay?.problem && readErrorIn(result.stderrTail, relay.url)) return relay.problem;
      return undefined;
    } catch (error) {
      if (this.abort.signal.aborted) throw error;
      if (relay?.problem) return relay.problem;
      throw await this.explained(error, probe);
    }
  }

  /**
   * A failed ffmpeg in the plan's terms. The command names streams by specifier without a probe
   * first, so an input lacking what an output asks for makes ffmpeg exit ("matches no streams"):
   * that is INPUT_INCOMPATIBLE, never a silently silent output. The probe, awaited only now,
   * tells an unreadable input (INPUT_UNREADABLE, as when it ran first) and names the missing
   * stream; ffmpeg's own line does when the probe has no answer.
   */
  private async explained(error: unknown, probe: Promise<ProbeOutcome>): Promise<unknown> {
    if (!(error instanceof FfmpegFailedError)) return error;
    const outcome = await probe;
    if ("error" in outcome && outcome.error instanceof InputUnreadableError) return outcome.error;
    if ("info" in outcome) {
      try {
        checkStreams(this.lease.plan, outcome.info);
      } catch (mismatch) {
        return mismatch;
      }
    }
    return missingStreamError(error.stderrTail) ?? error;
  }

  private async downloadSubtitles(plan: ExecutionPlan): Promise<string[]> {
    return Promise.all(
      plan.transforms.subtitles.map(async (subtitle, index) => {
        const path = join(this.directory, `subtitle-${index}`);
        await this.inputWait.run(() => downloadObject(this.client, subtitle.uri, path, this.retry));
        return path;
      }),
    );
  }

  /** SOFT subtitles retimed when segments are removed (ffmpeg cannot cut them). */
  private async retimeSubtitles(plan: ExecutionPlan, paths: string[], info: MediaInfo): Promise<void> {
    if (plan.transforms.removedSegments.length === 0) return;
    for (const [index, subtitle] of plan.transforms.subtitles.entries()) {
      if (subtitle.mode !== "SOFT") continue;
      const path = paths[index] as string;
      const text = await readFile(path, "utf8");
      await writeFile(path, retimeSubtitles(text, plan.transforms.removedSegments, info.durationMs));
    }
  }

  private async downloadWatermark(plan: ExecutionPlan): Promise<string | undefined> {
    if (!plan.transforms.watermark) return undefined;
    const path = join(this.directory, "watermark");
    const { uri } = plan.transforms.watermark;
    await this.inputWait.run(() => downloadObject(this.client, uri, path, this.retry));
    return path;
  }

  /**
   * Uploads every output where the lease says, and the log beside them; pauses (and waits)
   * while storage is down. The outputs are described for the completion report (the manifest's
   * durations, codecs and sizes) while they upload.
   */
  private async uploadAll(): Promise<OutputResult[]> {
    const described = Promise.all(this.record.outputs.map((output) => this.describe(output)));
    // Awaited after the uploads; a failed probe must not surface as unhandled meanwhile.
    described.catch(() => undefined);
    for (;;) {
      try {
        // Both settle before a pause, so nothing still sends while the attempt waits for storage.
        const [outputs, log] = await Promise.allSettled([this.uploadOutputs(), this.uploadLog()]);
        if (outputs.status === "rejected") throw outputs.reason;
        if (log.status === "rejected") throw log.reason;
        const uploads = outputs.value;
        const descriptions = await described;
        const results = this.record.outputs.map((output, index): OutputResult => {
          const uploaded = uploads[index] as (typeof uploads)[number];
          const description = descriptions[index] as OutputDescription;
          return {
            id: output.id,
            uri: this.uploadUri(output.id),
            bytes: uploaded.bytes,
            sha256: uploaded.sha256,
            ...description,
            ...(uploaded.incomplete ? { multipart: uploaded.incomplete } : {}),
          };
        });
        return results;
      } catch (err) {
        if (!(err instanceof StorageUnavailableError) || this.cancelled || this.stopping) throw err;
        this.record = { ...this.record, phase: "paused" };
        this.env.metrics?.storageWaitEntered();
        await this.env.records.save(this.record);
        const reason = err.message.replace(/\s+/g, " ").slice(0, 500);
        this.log.warn("storage unavailable; uploads paused until resume-uploads", {
          attemptId: this.lease.attemptId,
          reason,
        });
        // Listening before the report goes: the Manager may apply it, and an operator ask to
        // resume, before NATS has told this Worker the report is stored.
        const resumed = this.resumeRequested();
        await this.env.report(this.lease, "upload-paused", { reason, pausedAt: new Date().toISOString() });
        await this.waitForResume(resumed);
      }
    }
  }

  /** One output after another: each already has every part in flight that its bounds allow. */
  private async uploadOutputs(): Promise<UploadedOutput[]> {
    const uploads: UploadedOutput[] = [];
    for (const output of this.record.outputs) uploads.push(await this.uploads.upload(output));
    return uploads;
  }

  /** Resolves at resume-uploads, or when a cancel or a stop wakes the wait. */
  private resumeRequested(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.resumeWaiter = resolve;
    });
  }

  private async waitForResume(resumed: Promise<void>): Promise<void> {
    // A cancel or stop that came before the wait has no waiter to wake.
    this.abort.signal.throwIfAborted();
    this.env.metrics?.waitingStarted();
    await resumed;
    this.env.metrics?.waitingEnded();
    this.resumeWaiter = undefined;
    this.abort.signal.throwIfAborted();
    this.record = { ...this.record, phase: "uploading" };
    await this.env.records.save(this.record);
    await this.env.report(this.lease, "upload-resumed", {});
    this.log.info("uploads resumed", { attemptId: this.lease.attemptId });
  }

  private describe(output: EncodedOutput): Promise<OutputDescription> {
    const planned = this.lease.plan.outputs.find((entry) => entry.id === output.id);
    return describeOutput(output.path, planned?.container, { ffprobePath: this.env.ffprobePath });
  }

  private uploadUri(outputId: string): string {
    const upload = this.lease.uploads.find((entry) => entry.outputId === outputId);
    if (!upload) throw new Error(`the lease names no upload location for output ${outputId}`);
    return upload.uri;
  }

  private async uploadLog(): Promise<void> {
    const log = await readFile(this.record.logPath).catch(() => Buffer.from("(ffmpeg did not run)\n"));
    await putSmallObject(this.bodyClient, this.lease.logsUri, log, "text/plain; charset=utf-8", this.retry);
  }

  /**
   * Deletes the attempt's files and records; with abortUploads, its unfinished multipart
   * uploads too (every output's: while encoding, those uploading as they are written).
   */
  private async discard(options: { abortUploads: boolean }): Promise<void> {
    if (options.abortUploads) {
      for (const output of this.lease.plan.outputs) {
        await this.uploads
          .aborter(output.id)
          .abort()
          .catch((err) => this.log.warn("cannot abort a multipart upload", { output: output.id, err }));
      }
    }
    await rm(this.directory, { recursive: true, force: true });
    await rm(this.record.logPath, { force: true });
    await this.env.records.remove(this.lease);
  }
}
