/**
 * The attempts this Worker holds: takes or rejects leases (draining, no free slot, too late),
 * routes cancel and resume-uploads to their attempt, tells heartbeats what is held, and after
 * a restart picks up the attempts whose encoded outputs were still waiting to be uploaded.
 * Every attempt's reports go out in the order it made them, each once the one before is stored.
 */
import type { CancelCommand, Heartbeat, LeaseCommand, ResumeUploadsCommand } from "@tjm/protocol";
import { KeyedSequence } from "../platform/keyed-sequence.ts";
import { Attempt, type AttemptEnvironment } from "./attempt.ts";
import { keepsOutputs } from "./phases.ts";
import type { AttemptRecord } from "./records.ts";

export interface RegistryOptions extends AttemptEnvironment {
  /** Attempts encoded at once. */
  capacity: number;
  workDir: string;
  isDraining: () => boolean;
}

export class AttemptRegistry {
  private readonly attempts = new Map<string, Attempt>();
  private restored: AttemptRecord[] = [];
  /** What every attempt runs with: the options, with reports kept in order per attempt. */
  private readonly environment: AttemptEnvironment;

  constructor(private readonly options: RegistryOptions) {
    const reports = new KeyedSequence();
    this.environment = {
      ...options,
      report: (lease, type, body) => reports.run(lease.attemptId, () => options.report(lease, type, body)),
    };
  }

  /** Held attempts, for heartbeats (paused ones too: their files are kept here). */
  active(): Heartbeat["activeAttempts"] {
    return [...this.attempts.values()].map(({ lease }) => ({
      attemptId: lease.attemptId,
      fencingToken: lease.fencingToken,
    }));
  }

  /** Slots free for new leases; an attempt waiting for storage or sending its last report does not use one. */
  freeCapacity(): number {
    const busy = [...this.attempts.values()].filter((attempt) => attempt.holdsSlot).length;
    return Math.max(0, this.options.capacity - busy);
  }

  /**
   * Reads what a previous instance left: encoded outputs still to upload can be finished
   * (returned, for the re-registration); half-done encodes cannot: their files are deleted and
   * the uploads of outputs that went up while written are aborted.
   */
  async restore(): Promise<{ attemptId: string; fencingToken: string }[]> {
    const { records, unreadable } = await this.options.records.list();
    for (const path of unreadable)
      this.options.logger.warn("ignoring an unreadable attempt record", { path });
    this.restored = [];
    for (const record of records) {
      if (!keepsOutputs(record.phase)) {
        this.options.logger.info("discarding an attempt whose encode the previous instance did not finish", {
          attemptId: record.lease.attemptId,
        });
        await new Attempt(this.options, record, "drop").done;
      } else this.restored.push(record);
    }
    return this.restored.map(({ lease }) => ({
      attemptId: lease.attemptId,
      fencingToken: lease.fencingToken,
    }));
  }

  /**
   * The re-registration's answer: restored attempts the Manager did not keep (it failed them
   * while this Worker was away, or it already completed them) are dropped before any command is
   * read; going on with them would hold slots the Manager counts as free, and its leases would
   * be rejected. `undefined` (a Manager that does not say): keep them all.
   */
  async keepRestored(resumedAttemptIds: readonly string[] | undefined): Promise<void> {
    if (resumedAttemptIds === undefined) return;
    const kept = new Set(resumedAttemptIds);
    const dropped = this.restored.filter((record) => !kept.has(record.lease.attemptId));
    this.restored = this.restored.filter((record) => kept.has(record.lease.attemptId));
    for (const record of dropped) {
      this.options.logger.info(
        "dropping an attempt of the previous instance the Manager no longer counts as ours",
        {
          attemptId: record.lease.attemptId,
          jobId: record.lease.jobId,
          phase: record.phase,
        },
      );
      await new Attempt(this.environment, record, "drop").done;
    }
  }

  /** Continues the restored attempts: uploads go on, paused ones wait for resume-uploads. */
  startRestored(): void {
    for (const record of this.restored.splice(0)) {
      this.options.logger.info("continuing an attempt of the previous instance", {
        attemptId: record.lease.attemptId,
        phase: record.phase,
      });
      this.track(new Attempt(this.environment, record));
    }
  }

  /**
   * Takes the lease (its slot at once) and starts the attempt once `accepted` is stored: the
   * Manager waits on that report, and the attempt's first steps (its input, the probe beside it,
   * ffmpeg's spawn) would compete with it for the same cores, while waiting costs the encode the
   * stream's acknowledgement, about a millisecond. The record's write holds up neither, and a
   * crash before it is on disk loses nothing: restore() discards an attempt that was still
   * encoding anyway, so the next instance does not offer it and the Manager fails it as
   * WORKER_LOST, record or not. The record counts from `uploading` on, and the attempt's later
   * writes queue behind this one (AttemptRecords). Resolves once `accepted` is stored.
   */
  async lease(lease: LeaseCommand): Promise<void> {
    if (this.attempts.has(lease.attemptId)) return;
    const refusal = this.options.isDraining()
      ? "the Worker is draining"
      : this.freeCapacity() === 0
        ? "the Worker has no free slot"
        : Date.parse(lease.dispatchDeadline) <= Date.now()
          ? "the lease arrived after its dispatch deadline"
          : undefined;
    if (refusal) {
      this.options.logger.warn("lease rejected", {
        jobId: lease.jobId,
        attemptId: lease.attemptId,
        reason: refusal,
        holding: [...this.attempts.keys()],
      });
      await this.environment.report(lease, "rejected", { reason: refusal });
      return;
    }
    const record: AttemptRecord = {
      lease,
      directory: lease.workDirectory ?? this.options.workDir,
      phase: "accepting",
      outputs: [],
      logPath: this.options.records.logPath(lease.attemptId),
    };
    const saved = this.options.records.save(record).catch((err) =>
      // The encode goes on: the record matters only once outputs are encoded, and that save
      // fails the attempt if the disk still refuses.
      this.options.logger.warn("cannot save the attempt record", { attemptId: lease.attemptId, err }),
    );
    const accepted = this.environment.report(lease, "accepted", {});
    this.track(new Attempt(this.environment, record, "run", accepted));
    await accepted;
    this.options.logger.info("lease accepted", {
      attemptId: lease.attemptId,
      jobId: lease.jobId,
      attemptNumber: lease.attemptNumber,
    });
    await saved;
  }

  cancel(command: CancelCommand): void {
    // Read before the restored attempts start (commands flow as soon as NATS is up), the cancel
    // of one the re-registration kept (the Manager failed it since) starts it to cancel it.
    const attempt = this.find(command) ?? this.startRestoredNow(command);
    if (attempt) attempt.cancel();
    else
      this.options.logger.debug("cancel of an attempt this Worker does not hold", {
        attemptId: command.attemptId,
      });
  }

  /**
   * A restored attempt a command names before startRestored() ran: started now, so that the
   * command (a cancel, a resume-uploads) reaches it instead of being dropped.
   */
  private startRestoredNow(command: { attemptId: string; fencingToken: string }): Attempt | undefined {
    const index = this.restored.findIndex(
      ({ lease }) => lease.attemptId === command.attemptId && lease.fencingToken === command.fencingToken,
    );
    if (index < 0) return undefined;
    const [record] = this.restored.splice(index, 1) as [AttemptRecord];
    const attempt = new Attempt(this.environment, record);
    this.track(attempt);
    return attempt;
  }

  resume(command: ResumeUploadsCommand): void {
    const attempt = this.find(command) ?? this.startRestoredNow(command);
    if (!attempt?.resume()) {
      this.options.logger.warn("resume-uploads for an attempt that is not waiting here", {
        attemptId: command.attemptId,
      });
    }
  }

  /** The agent stops: attempts end without reports; uploads stay on disk for the next instance. */
  async stop(): Promise<void> {
    await Promise.all([...this.attempts.values()].map((attempt) => attempt.stop()));
  }

  private find(command: { attemptId: string; fencingToken: string }): Attempt | undefined {
    const attempt = this.attempts.get(command.attemptId);
    return attempt && attempt.lease.fencingToken === command.fencingToken ? attempt : undefined;
  }

  private track(attempt: Attempt): void {
    this.attempts.set(attempt.lease.attemptId, attempt);
    this.options.metrics?.attemptHeld();
    void attempt.done.finally(() => {
      this.attempts.delete(attempt.lease.attemptId);
      this.options.metrics?.attemptReleased();
      if (this.options.isDraining() && this.attempts.size === 0) {
        this.options.logger.info("drained: this Worker holds no more attempts");
      }
    });
  }
}
