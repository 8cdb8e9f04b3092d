/**
 * Finishes accepted completions: copies each staged output to its destination, writes the
 * manifest, and only then marks the attempt SUCCEEDED and the job COMPLETED. Staging keys are
 * attempt-scoped and only this code copies them to destinations, after the fencing check
 * accepted the attempt's completion, so a stale attempt can never replace a newer one's
 * output. A storage failure leaves the row as it was; the next pass tries again.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import type { Sql } from "../platform/db.ts";
import type { Logger } from "../platform/logger.ts";
import { WakeableLoop } from "../platform/loop.ts";
import { copyObject, deleteObject, putJson } from "./storage.ts";
import { completeAttempt, lockPendingPromotions, type PromotedOutput } from "./store.ts";

export interface PromoterOptions {
  sql: Sql;
  logger: Logger;
  storage: () => S3Client;
  /** Told after jobs completed. */
  promoted: () => void;
  tickMs?: number;
}

interface PlanOutputs {
  outputs: { id: string; destinationUri: string }[];
  manifestUri?: string;
}

export class Promoter {
  private readonly loop: WakeableLoop;
  readonly counters = { promoted: 0, failures: 0 };

  constructor(private readonly options: PromoterOptions) {
    this.loop = new WakeableLoop(async () => (await this.promoteOnce()) > 0, {
      tickMs: options.tickMs ?? 1000,
      logger: options.logger,
      what: "promotion",
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  wake(): void {
    this.loop.wake();
  }

  /** Promotes what it can lock; returns how many jobs it completed. */
  async promoteOnce(): Promise<number> {
    const staged: string[] = [];
    const completed = await this.options.sql.begin(async (tx) => {
      let count = 0;
      for (const attempt of await lockPendingPromotions(tx, 5)) {
        const plan = attempt.executionPlan as unknown as PlanOutputs;
        try {
          const outputs = await this.promote(plan, attempt.result.outputs);
          if (plan.manifestUri) {
            await putJson(this.options.storage(), plan.manifestUri, {
              jobId: attempt.jobId,
              attemptId: attempt.attemptId,
              attemptNumber: attempt.attemptNumber,
              completedAt: new Date().toISOString(),
              outputs,
              logsUri: attempt.result.logsUri,
            });
          }
        } catch (err) {
          this.counters.failures++;
          this.options.logger.warn("cannot promote outputs yet; retrying", { jobId: attempt.jobId, err });
          continue;
        }
        await completeAttempt(tx, attempt);
        staged.push(...attempt.result.outputs.map((output) => output.uri));
        count++;
      }
      return count;
    });
    this.counters.promoted += completed;
    if (completed > 0) this.options.promoted();
    await this.discard(staged);
    return completed;
  }

  private async promote(plan: PlanOutputs, staged: PromotedOutput[]) {
    const destinations = new Map(plan.outputs.map((output) => [output.id, output.destinationUri]));
    const promoted = [];
    for (const output of staged) {
      const destination = destinations.get(output.id);
      if (!destination) throw new Error(`output ${output.id} is not in the plan`);
      await copyObject(this.options.storage(), output.uri, destination, output.bytes);
      promoted.push({ ...output, uri: destination });
    }
    return promoted;
  }

  /** Removes staging objects no longer needed; a failure only leaves garbage behind, so it is logged. */
  async discard(uris: readonly string[]): Promise<void> {
    for (const uri of uris) {
      await deleteObject(this.options.storage(), uri).catch((err) =>
        this.options.logger.warn("cannot delete a staging object", { uri, err }),
      );
    }
  }
}
