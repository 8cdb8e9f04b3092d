/**
 * The Worker agent: checks its state directory, probes ffmpeg, registers (or re-registers)
 * with the Manager, then runs the instance's NATS session (nats/session.ts) until stop() or
 * until the instance cannot go on. Each start-up failure is an AgentExitError with its code.
 * Its Prometheus metrics are served from the start (registration retries count) to the stop.
 */
import { mkdir } from "node:fs/promises";
import { type Logger, withFields } from "@tjm/platform";
import { PROTOCOL_VERSION, type Report, type WorkerRegistrationResponse } from "@tjm/protocol";
import { AttemptRecords } from "./attempts/records.ts";
import { AttemptRegistry } from "./attempts/registry.ts";
import type { Config } from "./config.ts";
import { type Fetch, ManagerApi } from "./enroll/manager-api.ts";
import { register, reRegister, type StartupContext } from "./enroll/registration.ts";
import { NotEnrolledError, openState, StateError, saveIdentity, type WorkerState } from "./enroll/state.ts";
import { MetricsServer } from "./metrics/server.ts";
import { WorkerMetrics } from "./metrics/worker-metrics.ts";
import { NatsSession } from "./nats/session.ts";
import { AgentExitError, AgentStoppedError, ExitCode } from "./platform/exit-codes.ts";
import { FfmpegUnavailableError, probeFfmpeg } from "./probe/index.ts";
import { effectiveCapacity, toProtocolProbe } from "./probe/report.ts";
import { MIB } from "./storage/parts.ts";

export interface AgentOptions {
  config: Config;
  logger: Logger;
  fetch?: Fetch;
  now?: () => number;
  random?: () => number;
}

export interface AgentExit {
  code: ExitCode;
  /** Why the agent ended, when it was not asked to. */
  message?: string;
}

export class WorkerAgent {
  private readonly config: Config;
  private readonly logger: Logger;
  /** On every line the agent logs: the Worker's id, once it is known. */
  private readonly logFields: { workerId?: string } = {};
  private readonly api: ManagerApi;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly stopping = new AbortController();
  /** Unset when WORKER_METRICS_PORT is 0: then nothing is counted either. */
  private readonly metrics: WorkerMetrics | undefined;
  private metricsServer: MetricsServer | undefined;
  private instance: WorkerRegistrationResponse | undefined;
  private session: NatsSession | undefined;
  private attempts: AttemptRegistry | undefined;
  private stopped: Promise<void> | undefined;
  private resolveExit: (exit: AgentExit) => void = () => {};
  /** Resolves once the agent has stopped, with the exit code the process should end with. */
  readonly exited: Promise<AgentExit>;

  constructor(options: AgentOptions) {
    this.config = options.config;
    this.logger = withFields(options.logger, this.logFields);
    this.api = new ManagerApi(options.config.MANAGER_URL, options.fetch);
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.metrics = options.config.WORKER_METRICS_PORT === 0 ? undefined : new WorkerMetrics();
    this.exited = new Promise((resolve) => {
      this.resolveExit = resolve;
    });
  }

  /** True once an operator's drain command arrived: the execution loop takes no new leases. */
  get isDraining(): boolean {
    return this.session?.isDraining ?? false;
  }

  get stopRequested(): boolean {
    return this.stopping.signal.aborted;
  }

  /**
   * Resolves once the instance heartbeats and consumes its commands. Throws AgentExitError
   * (with the exit code) when the start fails, AgentStoppedError when stop() came first.
   */
  async start(): Promise<void> {
    await this.serveMetrics();
    try {
      await this.startInstance();
    } catch (err) {
      await this.closeMetrics();
      throw err;
    }
  }

  private async startInstance(): Promise<void> {
    const config = this.config;
    await this.prepareWorkDirectory();
    const state = await this.openState();
    if (state.identity && config.ENROLLMENT_TOKEN !== undefined) {
      this.logger.info("a Worker identity is stored; ENROLLMENT_TOKEN is not needed and is ignored", {
        workerId: state.identity.workerId,
      });
    }
    const probe = await this.probe();
    this.checkStopped();

    const description = {
      name: config.WORKER_NAME,
      pool: config.WORKER_POOL,
      capacityCap: config.WORKER_CAPACITY ?? null,
      probe,
    };
    const context = this.startupContext();
    const capacity = effectiveCapacity(probe.capacity, config.WORKER_CAPACITY);
    const attempts = this.createAttempts(capacity);
    const instance = state.identity
      ? await reRegister(
          context,
          state.keyPair,
          state.identity.workerId,
          description,
          await attempts.restore(),
        )
      : await this.enroll(context, state, config.ENROLLMENT_TOKEN as string, description);
    this.instance = instance;
    this.logFields.workerId = instance.workerId;
    await attempts.keepRestored(instance.resumedAttemptIds);
    this.checkStopped();
    this.logger.info(state.identity ? "worker re-registered" : "worker registered", {
      workerId: instance.workerId,
      instanceId: instance.instanceId,
      natsUrl: instance.natsUrl,
      natsAuth: instance.userJwt === null ? "none" : "jwt",
      userJwtExpiresAt: instance.userJwtExpiresAt,
    });

    this.session = new NatsSession({
      instance,
      keyPair: state.keyPair,
      seed: state.seed,
      api: this.api,
      logger: this.logger,
      attempts: () => attempts,
      connectTimeoutMs: config.WORKER_STARTUP_TIMEOUT_MS,
      signal: this.stopping.signal,
      onFatal: (code, message, fields) => this.fail(code, message, fields),
      now: this.now,
      random: this.random,
      metrics: this.metrics,
    });
    await this.session.open();
    attempts.startRestored();
    this.logger.info("worker started", {
      workerId: instance.workerId,
      instanceId: instance.instanceId,
      pool: config.WORKER_POOL,
      capacity,
      certification: probe.certification.status,
      heartbeatIntervalMs: instance.heartbeatIntervalMs,
    });
  }

  /** Stops heartbeats and the consumer, drains the NATS connection; safe to call more than once. */
  stop(): Promise<void> {
    return this.shutdown({ code: ExitCode.OK });
  }

  private shutdown(exit: AgentExit): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping.abort();
      // Attempts first: their last reports need the connection.
      await this.attempts?.stop();
      await this.session?.close();
      await this.closeMetrics();
      this.logger.info("worker stopped", { workerId: this.instance?.workerId, exitCode: exit.code });
      this.resolveExit(exit);
    })();
    return this.stopped;
  }

  /** Ends a running agent because its instance cannot go on. */
  private fail(code: ExitCode, message: string, fields: Record<string, unknown> = {}): void {
    if (this.stopRequested) return;
    this.logger.error(message, { exitCode: code, ...fields });
    void this.shutdown({ code, message });
  }

  private createAttempts(capacity: number): AttemptRegistry {
    const config = this.config;
    const instance = () => {
      if (!this.instance) throw new Error("the Worker has not registered yet");
      return this.instance;
    };
    this.attempts = new AttemptRegistry({
      pool: config.WORKER_POOL,
      ffmpegPath: config.FFMPEG_PATH,
      ffprobePath: config.FFPROBE_PATH,
      records: new AttemptRecords(config.WORKER_WORK_DIR),
      logger: this.logger,
      capacity,
      workDir: config.WORKER_WORK_DIR,
      isDraining: () => this.isDraining,
      metrics: this.metrics,
      storageRetry: {
        budgetMs: config.WORKER_UPLOAD_RETRY_BUDGET_MS,
        maxAttempts: config.WORKER_UPLOAD_RETRY_ATTEMPTS,
      },
      uploadParts: {
        ...(config.WORKER_UPLOAD_PART_SIZE_MIB !== undefined
          ? { partSize: config.WORKER_UPLOAD_PART_SIZE_MIB * MIB }
          : {}),
        concurrency: config.WORKER_UPLOAD_CONCURRENCY,
      },
      streamInput: config.WORKER_INPUT_STREAMING === "on",
      inputWaitMaxMs: config.WORKER_INPUT_WAIT_MAX_MS,
      report: async (lease, type, body) => {
        const { workerId, instanceId } = instance();
        await this.session?.publishReport({
          type,
          protocolVersion: PROTOCOL_VERSION,
          workerId,
          instanceId,
          attemptId: lease.attemptId,
          fencingToken: lease.fencingToken,
          sentAt: new Date().toISOString(),
          ...body,
        } as Report);
      },
      progress: (lease, update) => {
        const { workerId, instanceId } = instance();
        this.session?.publishProgress({
          protocolVersion: PROTOCOL_VERSION,
          workerId,
          instanceId,
          attemptId: lease.attemptId,
          fencingToken: lease.fencingToken,
          percent: update.percent,
          fps: update.fps,
          bitrateKbps: update.bitrateKbps,
          speed: update.speed,
          etaSeconds: update.etaSeconds,
          outTimeMs: update.outTimeMs,
          at: new Date().toISOString(),
        });
      },
    });
    return this.attempts;
  }

  private checkStopped(): void {
    if (this.stopRequested) throw new AgentStoppedError();
  }

  private startupContext(): StartupContext {
    return {
      api: this.api,
      managerUrl: this.config.MANAGER_URL,
      logger: this.logger,
      deadline: this.now() + this.config.WORKER_STARTUP_TIMEOUT_MS,
      timeoutMs: this.config.WORKER_STARTUP_TIMEOUT_MS,
      signal: this.stopping.signal,
      now: this.now,
      random: this.random,
      metrics: this.metrics,
    };
  }

  private async serveMetrics(): Promise<void> {
    if (!this.metrics) return;
    const { WORKER_METRICS_HOST: host, WORKER_METRICS_PORT: port } = this.config;
    try {
      this.metricsServer = await MetricsServer.listen(this.metrics, host, port);
      const shown = host.includes(":") ? `[${host}]` : host;
      this.logger.info("serving metrics", { url: `http://${shown}:${port}/metrics` });
    } catch (err) {
      // Metrics are for watching the work, not a condition of doing it: a port another
      // process holds must not keep this Worker from encoding. Prometheus shows the target down.
      this.logger.error("cannot serve metrics; running without them", {
        host,
        port,
        err: (err as Error).message,
      });
    }
  }

  private async closeMetrics(): Promise<void> {
    const server = this.metricsServer;
    this.metricsServer = undefined;
    await server?.close();
  }

  private async prepareWorkDirectory(): Promise<void> {
    try {
      await mkdir(this.config.WORKER_WORK_DIR, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new AgentExitError(
        ExitCode.CONFIG_INVALID,
        `cannot create WORKER_WORK_DIR ${this.config.WORKER_WORK_DIR}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  private async openState(): Promise<WorkerState> {
    try {
      const state = await openState(this.config.WORKER_STATE_DIR, this.config.MANAGER_URL, {
        canEnroll: this.config.ENROLLMENT_TOKEN !== undefined,
      });
      if (state.seedCreated) {
        this.logger.info("generated this Worker's NKey", {
          publicKey: state.keyPair.getPublicKey(),
          stateDir: state.dir,
        });
      }
      return state;
    } catch (err) {
      if (err instanceof NotEnrolledError) {
        throw new AgentExitError(
          ExitCode.ENROLLMENT_REFUSED,
          `WORKER_STATE_DIR ${this.config.WORKER_STATE_DIR} holds no Worker identity and ENROLLMENT_TOKEN is not set: the first start needs an enrollment token from an operator.`,
          { cause: err },
        );
      }
      if (err instanceof StateError)
        throw new AgentExitError(ExitCode.STATE_REFUSED, err.message, { cause: err });
      throw err;
    }
  }

  private async probe() {
    const ffmpegPath = this.config.FFMPEG_PATH ?? "ffmpeg";
    try {
      // No capacityCap: the Manager records the host's capacity and the cap separately.
      const report = toProtocolProbe(await probeFfmpeg({ pool: this.config.WORKER_POOL, ffmpegPath }));
      const log = report.certification.status === "READY" ? this.logger.info : this.logger.warn;
      log("ffmpeg probed", {
        ffmpegVersion: report.ffmpegVersion,
        certification: report.certification,
        hostCapacity: report.capacity,
        capabilities: report.capabilities.length,
      });
      return report;
    } catch (err) {
      const message =
        err instanceof FfmpegUnavailableError
          ? `ffmpeg cannot be started: ${err.message}`
          : `ffmpeg (${ffmpegPath}) is unusable: ${(err as Error).message}`;
      throw new AgentExitError(ExitCode.FFMPEG_UNUSABLE, message, { cause: err });
    }
  }

  private async enroll(
    context: StartupContext,
    state: WorkerState,
    token: string,
    description: Parameters<typeof register>[3],
  ): Promise<WorkerRegistrationResponse> {
    const instance = await register(context, state.keyPair, token, description);
    try {
      await saveIdentity(state.dir, { workerId: instance.workerId, managerUrl: this.config.MANAGER_URL });
    } catch (err) {
      throw new AgentExitError(
        ExitCode.STATE_REFUSED,
        `Registered as Worker ${instance.workerId} but could not record it: ${(err as Error).message}. The token is spent: have an operator disable this Worker and issue a new token.`,
        { cause: err },
      );
    }
    return instance;
  }
}
