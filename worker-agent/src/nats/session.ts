/**
 * One registered instance on NATS: the connection (authenticated with the user JWT the
 * Manager issued for the Worker's NKey), heartbeats, the Worker's command consumer, and the
 * JWT refreshed at half its lifetime. Ends by close(), or by calling onFatal when the
 * instance cannot go on (credentials refused, connection closed for good).
 */

import { type ConsumerMessages, type JsMsg, jetstream } from "@nats-io/jetstream";
import type { KeyPair } from "@nats-io/nkeys";
import {
  AuthorizationError,
  type ConnectionOptions,
  connect,
  jwtAuthenticator,
  type NatsConnection,
  UserAuthenticationExpiredError,
} from "@nats-io/transport-node";
import type { Logger } from "@tjm/platform";
import {
  encodeMessage,
  HeartbeatSchema,
  type Progress,
  ProgressSchema,
  type Report,
  ReportSchema,
  streams,
  subjects,
  type WorkerRegistrationResponse,
  workerConsumerName,
  workerInboxPrefix,
} from "@tjm/protocol";
import type { AttemptRegistry } from "../attempts/registry.ts";
import { type ManagerApi, ManagerRefusedError } from "../enroll/manager-api.ts";
import { refreshCredentials } from "../enroll/registration.ts";
import type { WorkerMetrics } from "../metrics/worker-metrics.ts";
import { backoffDelayMs, DEFAULT_BACKOFF, retryDelayBefore } from "../platform/backoff.ts";
import { AgentExitError, AgentStoppedError, ExitCode } from "../platform/exit-codes.ts";
import { sleep } from "../platform/sleep.ts";
import { decideCommand, RecentIds } from "./commands.ts";
import { refreshDelayMs, refreshRetryDelayMs } from "./credential-schedule.ts";
import { buildHeartbeat, SentAtClock } from "./heartbeat.ts";

export interface SessionOptions {
  instance: WorkerRegistrationResponse;
  keyPair: KeyPair;
  /** The NKey seed's text as bytes, what nats.js signs the server's nonce with. */
  seed: Uint8Array;
  api: ManagerApi;
  logger: Logger;
  /** What the Worker holds: routes lease/cancel/resume-uploads, feeds heartbeats. */
  attempts: () => AttemptRegistry;
  /** How long open() keeps retrying an unreachable NATS. */
  connectTimeoutMs: number;
  /** Aborted when the agent stops: every wait and retry ends. */
  signal: AbortSignal;
  onFatal: (code: ExitCode, message: string, fields?: Record<string, unknown>) => void;
  now: () => number;
  random: () => number;
  /** Unset when the agent serves no metrics. */
  metrics?: WorkerMetrics | undefined;
}

/** Bound on draining the NATS connection at close; a dead server must not hold the exit. */
const NATS_DRAIN_TIMEOUT_MS = 5000;

/**
 * How long each pull of the command consumer waits; it also sets the idle heartbeat (half of
 * it) by which the client notices that the server holding the consumer died. With nats.js's
 * 30 s, leases stalled 30 s or more after a cluster node was killed.
 */
const PULL_EXPIRES_MS = 5000;

export class NatsSession {
  private readonly instance: WorkerRegistrationResponse;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly clock = new SentAtClock();
  private readonly seen = new RecentIds();
  private nc: NatsConnection | undefined;
  private commands: ConsumerMessages | undefined;
  private userJwt: string | null = null;
  private userJwtExpiresAt: number | undefined;
  private refreshFailures = 0;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  /** Set while the session itself reconnects to present a refreshed JWT: not a failure. */
  private reconnectingForCredentials = false;
  private closing = false;
  private draining = false;

  constructor(private readonly options: SessionOptions) {
    this.instance = options.instance;
    this.logger = options.logger;
    this.now = options.now;
  }

  /** True once an operator's drain command arrived: the execution loop takes no new leases. */
  get isDraining(): boolean {
    return this.draining;
  }

  private get ended(): boolean {
    return this.closing || this.options.signal.aborted;
  }

  /** Connects (retrying until connectTimeoutMs), then heartbeats and consumes commands. */
  async open(): Promise<void> {
    this.acceptCredentials(this.instance.userJwt, this.instance.userJwtExpiresAt);
    const nc = await this.connect();
    this.nc = nc;
    if (this.ended) {
      await nc.close();
      throw new AgentStoppedError();
    }
    void this.watchConnection(nc);
    this.startHeartbeats(nc);
    void this.consumeCommands(nc);
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.refreshTimer);
    this.commands?.stop();
    const nc = this.nc;
    if (!nc || nc.isClosed()) return;
    const drained = nc.drain().then(
      () => true,
      () => false,
    );
    const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), NATS_DRAIN_TIMEOUT_MS));
    if (!(await Promise.race([drained, timeout]))) await nc.close().catch(() => {});
  }

  // ---- connection -------------------------------------------------------------------------

  private async connect(): Promise<NatsConnection> {
    const { instance, now } = this;
    const options: ConnectionOptions = {
      // The Manager hands a cluster's servers as one comma-separated string.
      servers: instance.natsUrl.split(","),
      name: `tjm-worker-${instance.workerId}`,
      // The Worker's credentials allow subscribing under this prefix only.
      inboxPrefix: workerInboxPrefix(instance.subjectPrefix, instance.workerId),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      // A server that hangs (paused, partitioned) without closing the socket is left for
      // another of the cluster within 15 s, well before the Manager's WORKER_LOST_AFTER_MS (30 s
      // by default) takes this Worker for lost; nats.js's default is 2 min x 2 pings.
      pingInterval: 5_000,
      maxPingOut: 3,
      // An expired JWT is answered by refreshing it; the client must keep trying meanwhile.
      ignoreAuthErrorAbort: true,
      // Read at every (re)connect, so a refreshed JWT is used from the next connect on.
      ...(instance.userJwt === null
        ? {}
        : { authenticator: jwtAuthenticator(() => this.userJwt ?? "", this.options.seed) }),
    };
    const deadline = now() + this.options.connectTimeoutMs;
    for (let failures = 0; ; failures++) {
      const timeout = Math.max(1000, Math.min(5000, deadline - now()));
      try {
        const nc = await connect({ ...options, timeout });
        this.logger.info("connected to NATS", { server: nc.getServer() });
        return nc;
      } catch (err) {
        if (err instanceof AuthorizationError || err instanceof UserAuthenticationExpiredError) {
          throw new AgentExitError(
            ExitCode.UNEXPECTED,
            `NATS at ${instance.natsUrl} refused the credentials the Manager issued: ${err.message}. Does the Manager's NATS_AUTH match the server's configuration?`,
            { cause: err },
          );
        }
        if (this.ended) throw new AgentStoppedError();
        const delay = retryDelayBefore(deadline, now(), failures, DEFAULT_BACKOFF, this.options.random);
        if (delay === undefined) {
          throw new AgentExitError(
            ExitCode.MANAGER_UNREACHABLE,
            `NATS at ${instance.natsUrl} (as the Manager advertises it) did not answer within WORKER_STARTUP_TIMEOUT_MS (${this.options.connectTimeoutMs} ms): ${(err as Error).message}`,
            { cause: err },
          );
        }
        this.logger.warn("NATS is not reachable yet; retrying", {
          url: instance.natsUrl,
          retryInMs: delay,
          err: (err as Error).message,
        });
        await sleep(delay, this.options.signal);
        if (this.ended) throw new AgentStoppedError();
      }
    }
  }

  private async watchConnection(nc: NatsConnection): Promise<void> {
    void nc.closed().then((err) => {
      if (this.ended) return;
      this.options.onFatal(ExitCode.UNEXPECTED, `the NATS connection closed${err ? `: ${err.message}` : ""}`);
    });
    for await (const status of nc.status()) {
      switch (status.type) {
        case "disconnect":
          if (this.reconnectingForCredentials) {
            this.logger.info("reconnecting to NATS with the refreshed JWT", { server: status.server });
          } else {
            this.logger.warn("disconnected from NATS; reconnecting", { server: status.server });
          }
          break;
        case "reconnect":
          this.reconnectingForCredentials = false;
          this.logger.info("reconnected to NATS", { server: status.server });
          break;
        case "error":
          // Includes permission violations, which NATS reports here rather than as a throw.
          this.logger.warn("NATS reported an error", { err: status.error });
          break;
        case "ldm":
          this.logger.info("the NATS server is shutting down (lame duck mode)", { server: status.server });
          break;
        default:
          this.logger.debug("NATS status", { status: status.type });
      }
    }
  }

  // ---- heartbeats ---------------------------------------------------------------------------

  private startHeartbeats(nc: NatsConnection): void {
    const instance = this.instance;
    const subject = subjects.workerHeartbeat(instance.subjectPrefix, instance.workerId);
    const beat = () => {
      if (nc.isClosed() || nc.isDraining()) return;
      const attempts = this.options.attempts();
      const heartbeat = buildHeartbeat(
        instance,
        this.clock.next(Date.now()),
        attempts.active(),
        attempts.freeCapacity(),
      );
      try {
        nc.publish(subject, encodeMessage(HeartbeatSchema, heartbeat));
      } catch (err) {
        this.logger.warn("cannot publish a heartbeat", { err });
      }
    };
    beat();
    this.heartbeatTimer = setInterval(beat, instance.heartbeatIntervalMs);
  }

  // ---- commands -----------------------------------------------------------------------------

  private async consumeCommands(nc: NatsConnection): Promise<void> {
    const stream = streams(this.instance.subjectPrefix).commands.name;
    const name = workerConsumerName(this.instance.workerId);
    // No jetstreamManager: the Worker may only read its own consumer's info and pull from it.
    const js = jetstream(nc);
    for (let failures = 0; !this.ended; failures++) {
      try {
        const consumer = await js.consumers.get(stream, name);
        // A consumer deleted with its stream ends the loop below at once, and this loop waits
        // for the Manager to create it again, instead of the client checking every 30 s.
        const messages = await consumer.consume({
          abort_on_missing_resource: true,
          expires: PULL_EXPIRES_MS,
        });
        this.commands = messages;
        if (this.ended) {
          messages.stop();
          return;
        }
        void this.watchConsumer(messages);
        failures = 0;
        this.logger.info("consuming commands", { stream, consumer: name });
        for await (const msg of messages) this.handleCommand(msg);
        if (this.ended) return;
        throw new Error("the command consumer stopped");
      } catch (err) {
        if (this.ended) return;
        const delay = backoffDelayMs(failures, DEFAULT_BACKOFF, this.options.random);
        this.logger.warn("cannot consume commands; retrying", {
          stream,
          consumer: name,
          retryInMs: delay,
          err,
        });
        await sleep(delay, this.options.signal);
      }
    }
  }

  private async watchConsumer(messages: ConsumerMessages): Promise<void> {
    for await (const note of messages.status()) {
      switch (note.type) {
        case "consumer_deleted":
        case "consumer_not_found":
        case "stream_not_found":
        case "exceeded_limits":
        case "no_responders":
          this.logger.warn("command consumer problem", { notification: note });
          break;
        default:
          this.logger.debug("command consumer status", { notification: note.type });
      }
    }
  }

  private handleCommand(msg: JsMsg): void {
    const decision = decideCommand(msg.data, this.seen);
    const fields = { streamSequence: msg.seq, redelivered: msg.redelivered };
    switch (decision.kind) {
      case "invalid":
        this.logger.warn("dropping a command that cannot be read", { ...fields, reason: decision.reason });
        // No reason on the wire: nats-server before 2.10 takes "+TERM <reason>" for no ack at
        // all and would redeliver the command after every ack wait, forever.
        msg.term();
        return;
      case "duplicate":
        this.logger.debug("command already handled", { ...fields, commandId: decision.envelopeId });
        msg.ack();
        return;
      case "drain":
        if (!this.draining) {
          this.draining = true;
          this.logger.info("draining: this Worker takes no new leases", {
            ...fields,
            commandId: decision.envelopeId,
          });
        }
        msg.ack();
        return;
      case "undrain":
        if (this.draining) {
          this.draining = false;
          this.logger.info("undrained: this Worker takes leases again", {
            ...fields,
            commandId: decision.envelopeId,
          });
        }
        msg.ack();
        return;
      case "lease":
        // Acked once handed over: the attempt answers with accepted or rejected itself.
        msg.ack();
        void this.options
          .attempts()
          .lease(decision.command)
          .catch((err) =>
            this.logger.error("cannot take a lease", {
              jobId: decision.command.jobId,
              attemptId: decision.command.attemptId,
              err,
            }),
          );
        return;
      case "cancel":
        msg.ack();
        this.options.attempts().cancel(decision.command);
        return;
      case "resume-uploads":
        msg.ack();
        this.options.attempts().resume(decision.command);
        return;
    }
  }

  // ---- reports and progress -----------------------------------------------------------------

  /**
   * Stores a report in <PREFIX>_REPORTS, retrying until the stream acknowledges it (NATS may be
   * reconnecting) or the session ends. Reports are how an attempt's outcome reaches the Manager.
   */
  async publishReport(report: Report): Promise<void> {
    const subject = subjects.workerReports(this.instance.subjectPrefix, this.instance.workerId);
    const data = encodeMessage(ReportSchema, report);
    for (let failures = 0; ; failures++) {
      const nc = this.nc;
      try {
        if (!nc) throw new Error("not connected to NATS yet");
        await jetstream(nc).publish(subject, data);
        return;
      } catch (err) {
        if (this.ended) throw new AgentStoppedError();
        this.options.metrics?.retried("report_publish");
        const delay = backoffDelayMs(failures, DEFAULT_BACKOFF, this.options.random);
        this.logger.warn("cannot store a report yet; retrying", { type: report.type, retryInMs: delay, err });
        await sleep(delay, this.options.signal).catch(() => {});
      }
    }
  }

  /** Progress is not stored: a lost update is replaced by the next one. */
  publishProgress(progress: Progress): void {
    const nc = this.nc;
    if (!nc || nc.isClosed() || nc.isDraining()) return;
    try {
      nc.publish(
        subjects.workerProgress(this.instance.subjectPrefix, this.instance.workerId),
        encodeMessage(ProgressSchema, progress),
      );
    } catch (err) {
      this.logger.debug("cannot publish progress", { err });
    }
  }

  // ---- credentials --------------------------------------------------------------------------

  private acceptCredentials(userJwt: string | null, expiresAt: string | null): void {
    clearTimeout(this.refreshTimer);
    if (userJwt === null || expiresAt === null) {
      if (this.userJwt !== null) {
        this.logger.warn("the Manager no longer issues NATS credentials; keeping the current JWT");
      }
      return;
    }
    this.userJwt = userJwt;
    this.userJwtExpiresAt = Date.parse(expiresAt);
    this.scheduleRefresh(refreshDelayMs(this.userJwtExpiresAt, this.now()));
  }

  private scheduleRefresh(delayMs: number): void {
    clearTimeout(this.refreshTimer);
    if (this.ended) return;
    this.refreshTimer = setTimeout(() => void this.refresh(), delayMs);
  }

  private async refresh(): Promise<void> {
    const instance = this.instance;
    if (this.ended) return;
    try {
      const credentials = await refreshCredentials(this.options.api, this.options.keyPair, instance);
      if (this.ended) return;
      this.refreshFailures = 0;
      this.acceptCredentials(credentials.userJwt, credentials.userJwtExpiresAt);
      this.logger.info("NATS credentials refreshed", { expiresAt: credentials.userJwtExpiresAt });
      // The server checks a JWT only at connect: reconnect so it holds the new one before the old expires.
      const nc = this.nc;
      if (credentials.userJwt !== null && nc && !nc.isClosed() && !nc.isDraining()) {
        this.reconnectingForCredentials = true;
        await nc.reconnect();
      }
    } catch (err) {
      if (this.ended) return;
      if (err instanceof ManagerRefusedError) {
        this.options.onFatal(
          err.status === 400 ? ExitCode.UNEXPECTED : ExitCode.IDENTITY_REJECTED,
          `the Manager refused to refresh this instance's NATS credentials (HTTP ${err.status}): ${err.message}`,
          { workerId: instance.workerId, instanceId: instance.instanceId },
        );
        return;
      }
      this.refreshFailures++;
      const now = this.now();
      const delay = refreshRetryDelayMs(
        this.refreshFailures,
        this.userJwtExpiresAt ?? now,
        now,
        this.options.random,
      );
      this.logger.warn("cannot refresh NATS credentials; retrying", {
        retryInMs: delay,
        expiresAt:
          this.userJwtExpiresAt === undefined ? undefined : new Date(this.userJwtExpiresAt).toISOString(),
        err: (err as Error).message,
      });
      this.scheduleRefresh(delay);
    }
  }
}
