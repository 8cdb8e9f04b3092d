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
import { assertNever, type Logger, withFields } from "@tjm/platform";
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
import { type AttemptFailure, describeFailure } from "./failures.ts";
import { OutputUploads, type UploadedOutput } from "./output-uploads.ts";
import {
  type AttemptEffect,
  type AttemptEvent,
  type AttemptPhase,
  failedStage,
  holdsSlot,
  keepsOutputs,
  next,
} from "./phases.ts";
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

/** What a step's effects need beyond the attempt itself, and what one effect leaves for the next. */
interface StepContext {
  outputs?: OutputResult[];
  failure?: AttemptFailure;
  pause?: { reason: string; pausedAt: string };
  /** Set by `upload-log` when the log went up. */
  logsUri?: string | undefined;
}

export class Attempt {
  private readonly abort = new AbortController();
  /** Made on first use: see `client`. */
  private s3Client: S3Client | undefined;
  private s3BodyClient: S3Client | undefined;
  private outputUploads: OutputUploads | undefined;
  private ffmpeg: RunningFfmpeg | undefined;
  private resumeWaiter: (() => void) | undefined;
  /** A resume-uploads that came before the wait for it began (a restored attempt not yet running). */
  private resumeAsked = false;
  /** Made on first use, like the S3 client. */
  private storageWait: InputWait | undefined;
  /** What `input-waiting` reports: the wait going on now. */
  private inputWaitState: InputWaitState | undefined;
  /** Where the attempt stands (phases.ts): only `step` changes it, as the table says. */
  private phase: AttemptPhase;
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
    // An attempt runs from the start of its encode, or on from outputs a previous run kept.
    this.phase = keepsOutputs(record.phase) ? record.phase : "accepting";
    this.done = (
      mode === "drop"
        ? this.step("drop")
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
      // Entered once, then told again when the last error changes.
      if (!this.inputWaitState) this.env.metrics?.inputWaitChanged(true);
      this.inputWaitState = state;
      this.log.warn("storage unavailable; the encode waits for its input", {
        since: state.since.toISOString(),
        lastError: state.lastError,
      });
      void this.step("input-waiting");
      return;
    }
    this.env.metrics?.inputWaitChanged(false);
    this.inputWaitState = undefined;
    // A wait that ran out fails the attempt, a cancelled one ends it: either report says so.
    if (ended !== "answered") return;
    this.log.info("storage answers again; the encode goes on");
    void this.step("input-resumed");
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

  /** Whether it takes one of the Worker's slots (phases.ts says which phases do). */
  get holdsSlot(): boolean {
    return holdsSlot(this.phase);
  }

  /** Stop the work, abort the uploads, delete the files, report `cancelled`. */
  cancel(): void {
    void this.step("cancel");
  }

  /** resume-uploads: true when the attempt was waiting for it. */
  resume(): boolean {
    if (this.phase !== "waiting_for_storage") return false;
    if (this.resumeWaiter) this.resumeWaiter();
    else this.resumeAsked = true;
    return true;
  }

  /**
   * The agent is stopping: encoding is lost (the Manager fails it as WORKER_LOST), encoded
   * outputs and upload state stay on disk for the next instance.
   */
  async stop(): Promise<void> {
    void this.step("stop");
    await this.done;
  }

  private get directory(): string {
    return join(this.record.directory, this.lease.attemptId);
  }

  private get retry() {
    return { signal: this.abort.signal, retry: this.env.storageRetry, logger: this.log };
  }

  /**
   * Drives the attempt from its phase to its end: each step's outcome is an event, and the table
   * says what follows. A step stopped by a cancel or a stop throws the attempt's abort reason,
   * and the phase that cancel or stop led to says how the attempt ends.
   */
  private async run(): Promise<void> {
    try {
      this.abort.signal.throwIfAborted();
      await this.step("accepted-stored");
      if (this.phase === "preparing") await this.encode();
      if (this.phase === "waiting_for_storage") await this.waitForResume(this.resumeRequested());
      const outputs = await this.uploadAll();
      await this.step("uploaded", { outputs }, { orAborted: true });
      await this.step("reported");
    } catch (error) {
      // Whatever the step threw, a cancel or a stop that came first decides how it ends.
      if (this.abort.signal.aborted) await this.step("unwound");
      else {
        const failure = describeFailure(error, failedStage(this.phase));
        this.log.warn("attempt failed", { attemptId: this.lease.attemptId, ...failure, err: error });
        const context: StepContext = { failure };
        await this.step("step-failed", context);
        await this.step("cleaned-up", context);
      }
      await this.step("reported");
    }
  }

  /**
   * Applies an event (phases.ts) and runs the effects the table names, in order. An event the
   * phase does not take changes nothing (a cancel of an attempt already reporting, say); with
   * `orAborted`, one refused because a cancel or stop came first throws the abort's reason, so
   * the run ends as that phase says.
   */
  private async step(
    event: AttemptEvent,
    context: StepContext = {},
    options: { orAborted?: boolean } = {},
  ): Promise<void> {
    const resolution = next(this.phase, event);
    if (resolution.kind === "refused") {
      if (options.orAborted && this.abort.signal.aborted) throw this.abort.signal.reason;
      this.log.debug("attempt event ignored", { event, phase: this.phase, reason: resolution.reason });
      return;
    }
    const from = this.phase;
    this.phase = resolution.to;
    if (from !== resolution.to) this.log.debug("attempt phase", { event, from, to: resolution.to });
    for (const effect of resolution.effects) await this.runEffect(effect, context);
  }

  private async runEffect(effect: AttemptEffect, context: StepContext): Promise<void> {
    switch (effect) {
      case "stop-work": {
        const why =
          this.phase === "cancelling" ? "the Manager cancelled the attempt" : "the Worker is stopping";
        this.abort.abort(new Cancelled(why));
        this.ffmpeg?.cancel();
        this.resumeWaiter?.();
        return;
      }
      case "save-record":
        this.record = { ...this.record, phase: this.phase };
        await this.env.records.save(this.record);
        return;
      // Not awaited: the registry sends this attempt's reports in order, so `started` still
      // follows `accepted` and precedes `encoded`, and the work goes on while NATS takes them.
      case "report-started":
        return this.reportInBackground("started", {});
      case "report-input-waiting": {
        const state = this.inputWaitState;
        if (state) {
          this.reportInBackground("input-waiting", {
            since: state.since.toISOString(),
            lastError: state.lastError,
          });
        }
        return;
      }
      case "report-input-resumed":
        return this.reportInBackground("input-resumed", {});
      case "report-encoded":
        return this.reportInBackground("encoded", {});
      case "report-upload-paused":
        if (!context.pause) throw new Error("upload-paused needs the pause's reason and time");
        await this.env.report(this.lease, "upload-paused", context.pause);
        return;
      case "report-upload-resumed":
        await this.env.report(this.lease, "upload-resumed", {});
        this.log.info("uploads resumed", { attemptId: this.lease.attemptId });
        return;
      case "report-completed":
        if (!context.outputs) throw new Error("completed needs the outputs");
        this.env.metrics?.attemptEnded("succeeded");
        await this.env.report(this.lease, "completed", {
          outputs: context.outputs,
          logsUri: this.lease.logsUri,
        });
        this.log.info("attempt completed", { attemptId: this.lease.attemptId, jobId: this.lease.jobId });
        return;
      case "report-failed": {
        if (!context.failure) throw new Error("failed needs the failure");
        this.env.metrics?.attemptEnded("failed");
        const { logsUri } = context;
        await this.env.report(this.lease, "failed", { ...context.failure, ...(logsUri ? { logsUri } : {}) });
        return;
      }
      case "report-cancelled":
        this.env.metrics?.attemptEnded("cancelled");
        await this.env.report(this.lease, "cancelled", {});
        this.log.info("attempt cancelled", { attemptId: this.lease.attemptId });
        return;
      case "upload-log":
        context.logsUri = await this.uploadLog().then(
          () => this.lease.logsUri,
          () => undefined,
        );
        return;
      case "abort-uploads":
        // Every output's: while encoding, those uploading as they are written.
        for (const output of this.lease.plan.outputs) {
          await this.uploads
            .aborter(output.id)
            .abort()
            .catch((err) => this.log.warn("cannot abort a multipart upload", { output: output.id, err }));
        }
        return;
      case "delete-files":
        await rm(this.directory, { recursive: true, force: true });
        await rm(this.record.logPath, { force: true });
        await this.env.records.remove(this.lease);
        return;
      default:
        assertNever(effect);
    }
  }

  private reportInBackground<T extends "started" | "encoded" | "input-waiting" | "input-resumed">(
    type: T,
    body: ReportBody<T>,
  ): void {
    this.env.report(this.lease, type, body).catch((err) => this.log.warn(`cannot report ${type}`, { err }));
  }

  private async encode(): Promise<void> {
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
      await this.step("input-ready", {}, { orAborted: true });
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
      outputs: plan.outputs.map((output) => ({ id: output.id, path: outputPaths[output.id] as string })),
    };
    // The uploads need only the record on disk: `encoded` goes out while they start.
    await this.step("encoded", {}, { orAborted: true });
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
   * One ffmpeg run with its outputs uploading while they are written, their part sizes fixed at
   * the spawn from what is known then (the probe's facts only when the plan waited for them).
   * Outputs it leaves complete are checked against what went up; the uploads of a run that
   * failed stay for the attempt's `abort-uploads`, those of a run encoded again are aborted
   * first. Resolves to the relay's problem when the stream failed this run.
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
        if (!(err instanceof StorageUnavailableError) || this.abort.signal.aborted) throw err;
        this.env.metrics?.storageWaitEntered();
        const reason = err.message.replace(/\s+/g, " ").slice(0, 500);
        this.log.warn("storage unavailable; uploads paused until resume-uploads", {
          attemptId: this.lease.attemptId,
          reason,
        });
        const pause = { reason, pausedAt: new Date().toISOString() };
        // Listening before the report goes: the Manager may apply it, and an operator ask to
        // resume, before NATS has told this Worker the report is stored.
        const resumed = this.resumeRequested();
        await this.step("storage-lost", { pause }, { orAborted: true });
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
    if (this.resumeAsked) {
      this.resumeAsked = false;
      return Promise.resolve();
    }
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
    await this.step("resume-requested", {}, { orAborted: true });
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
}
