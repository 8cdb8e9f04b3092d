/**
 * A Worker driven by the test at the protocol level: it enrolls through the real routes,
 * heartbeats, pulls its own commands from its durable consumer and sends the reports the
 * test tells it to. For tests of the Manager's side of execution (dispatch, fencing,
 * deadlines, lost Workers), where running ffmpeg would only slow them down; the agent's
 * own tests run the real thing.
 */
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { waitFor } from "@tjm/devstack/services";
import {
  type Command,
  CommandEnvelopeSchema,
  decodeMessage,
  encodeMessage,
  type LeaseCommand,
  PROTOCOL_VERSION,
  type Report,
  type ReportBody,
  ReportSchema,
  streams,
  subjects,
  type WorkerRegistrationRequest,
  workerConsumerName,
} from "@tjm/protocol";
import type { TestManager } from "./manager.ts";
import { type EnrolledWorker, enroll, heartbeat } from "./workers.ts";

export class ProtocolWorker {
  /** Each command once, in the order received: a redelivered envelope is dropped, as the agent does. */
  readonly commands: Command[] = [];
  /** The envelope id each command came in, by its place in `commands`. */
  readonly envelopeIds: string[] = [];
  private beating: ReturnType<typeof setInterval> | undefined;
  private stopPulling: (() => void) | undefined;
  private pulled: Promise<void> | undefined;
  private stopped = false;

  private constructor(
    readonly manager: TestManager,
    readonly worker: EnrolledWorker,
    readonly nc: NatsConnection,
  ) {}

  static async start(
    manager: TestManager,
    options: { heartbeatMs?: number; overrides?: Partial<WorkerRegistrationRequest> } = {},
  ): Promise<ProtocolWorker> {
    const worker = await enroll(manager, {
      probe: {
        ffmpegVersion: "5.1.9",
        capabilities: ["libx264", "libx265", "libvpx-vp9", "libsvtav1", "aac", "libopus", "libmp3lame"],
        hardwareEncoders: [],
        certification: { status: "READY", reasons: [] },
        capacity: 4,
      },
      ...options.overrides,
    });
    const nc = await connect({ servers: manager.natsUrl });
    const driver = new ProtocolWorker(manager, worker, nc);
    driver.startHeartbeats(options.heartbeatMs ?? 200);
    driver.pulled = driver.pull();
    return driver;
  }

  get workerId(): string {
    return this.worker.workerId;
  }

  startHeartbeats(intervalMs: number): void {
    heartbeat(this.nc, this.manager.subjectPrefix, this.worker);
    this.beating = setInterval(() => heartbeat(this.nc, this.manager.subjectPrefix, this.worker), intervalMs);
  }

  stopHeartbeats(): void {
    clearInterval(this.beating);
  }

  /** Waits for a command of the given type (and attempt, if given) and returns it. */
  async nextCommand<T extends Command["type"]>(
    type: T,
    attemptId?: string,
  ): Promise<Extract<Command, { type: T }>> {
    let found: Command | undefined;
    await waitFor(
      `a ${type} command`,
      async () => {
        found = this.commands.find(
          (command) =>
            command.type === type &&
            (!attemptId || ("attemptId" in command && command.attemptId === attemptId)),
        );
        return found !== undefined;
      },
      20_000,
      20,
    );
    return found as Extract<Command, { type: T }>;
  }

  /** Waits for the lease of one job's attempt (the first, or the given attempt number). */
  async nextLease(jobId: string, attemptNumber = 1): Promise<LeaseCommand> {
    let found: LeaseCommand | undefined;
    await waitFor(
      `the lease of attempt ${attemptNumber} of job ${jobId}`,
      async () => {
        found = this.leases().find((lease) => lease.jobId === jobId && lease.attemptNumber === attemptNumber);
        return found !== undefined;
      },
      20_000,
      20,
    );
    return found as LeaseCommand;
  }

  leases(): LeaseCommand[] {
    return this.commands.filter((command): command is LeaseCommand => command.type === "lease");
  }

  /** Sends a report for a lease, as this Worker's current instance unless told otherwise. */
  async report<T extends Report["type"]>(
    type: T,
    lease: { attemptId: string; fencingToken: string },
    body: ReportBody<T> = {} as ReportBody<T>,
    instanceId = this.worker.instanceId,
  ): Promise<void> {
    const message = {
      type,
      protocolVersion: PROTOCOL_VERSION,
      workerId: this.workerId,
      instanceId,
      attemptId: lease.attemptId,
      fencingToken: lease.fencingToken,
      sentAt: new Date().toISOString(),
      ...body,
    } as Report;
    await jetstream(this.nc).publish(
      subjects.workerReports(this.manager.subjectPrefix, this.workerId),
      encodeMessage(ReportSchema, message),
    );
  }

  /** Publishes raw bytes on a reports subject (bad-input tests). */
  async publishRaw(subject: string, data: Uint8Array): Promise<void> {
    await jetstream(this.nc).publish(subject, data);
  }

  /**
   * Pulls from its durable consumer like the agent: when the consumer disappears (its stream
   * was deleted), it gets it again once the Manager has created it again.
   */
  private async pull(): Promise<void> {
    const seen = new Set<string>();
    while (!this.stopped) {
      try {
        const consumer = await jetstream(this.nc).consumers.get(
          streams(this.manager.subjectPrefix).commands.name,
          workerConsumerName(this.workerId),
        );
        const messages = await consumer.consume({ abort_on_missing_resource: true });
        this.stopPulling = () => messages.stop();
        if (this.stopped) messages.stop();
        for await (const message of messages) {
          const decoded = decodeMessage(CommandEnvelopeSchema, message.data);
          if (decoded.ok && !seen.has(decoded.value.id)) {
            seen.add(decoded.value.id);
            this.envelopeIds.push(decoded.value.id);
            this.commands.push(decoded.value.data);
          }
          message.ack();
        }
      } catch {
        // The consumer or its stream is gone for now; the Manager creates both again.
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopHeartbeats();
    this.stopPulling?.();
    await this.pulled?.catch(() => {});
    await this.nc.close();
  }
}
