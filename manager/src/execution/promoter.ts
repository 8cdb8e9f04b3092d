/**
 * Finishes accepted completions: makes each output visible at its destination, writes the
 * manifest, and only then marks the attempt SUCCEEDED and the job COMPLETED. Only this code
 * does that, after the fencing check accepted the attempt's completion, so a stale attempt can
 * never replace a newer one's output. The lease named one of two ways (S3_COMMIT):
 * - copy: the output is complete at an attempt-scoped staging key and is copied server-side;
 * - multipart: the output is an incomplete upload at the destination itself, completed here
 *   with the report's part list after every other upload at that key is aborted (commit.ts of
 *   @tjm/storage, which also recognises a commit whose record a crash lost).
 * A storage failure leaves the row as it was; the next pass tries again.
 *
 * Each copy must have the size the attempt's completed report recorded: the staged object is
 * checked before the copy, and where the store refuses to pin the copy to the staged object's
 * ETag (Swift 2.30 with multipart objects) the destination is checked after it (copyObject of
 * @tjm/storage says what that check cannot see). An output of another size will not become
 * right on a retry, nor will a part list the upload does not hold: the attempt fails with
 * OUTPUT_MISMATCH, which fails the job, and the staged objects (or the upload) are kept for
 * whoever looks into it.
 *
 * Each copy is recorded as it succeeds (in the pass's transaction, which commits even when a
 * later step of that attempt fails), so a pass cut after some copies (the manifest write
 * failed, the store went away) resumes with the rest: a destination is written once. Only a
 * Manager dying between a copy and the commit leaves a copy to be made again, of the same
 * staged object; a multipart commit it made is recognised by its ETag instead.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import type { Logger } from "@tjm/platform";
import type { ExecutionPlan } from "@tjm/protocol";
import {
  abortMultipartUpload,
  CommitMismatchError,
  CopyMismatchError,
  commitMultipartUpload,
  copyObject,
  deleteObject,
  putSmallObject,
  type RetryOptions,
} from "@tjm/storage";
import type { Loop } from "../lifecycle/index.ts";
import type { Sql } from "../platform/db.ts";
import { WakeableLoop } from "../platform/loop.ts";
import {
  lockPendingPromotions,
  markOutputPromoted,
  type PromotedOutput,
  recordManifest,
} from "./promotion-store.ts";
import { applyTrigger } from "./transitions.ts";

/**
 * Promotion runs inside the transaction that holds the attempts' row locks, and the next pass
 * tries a failed promotion again anyway: 3 storage attempts within 5 s keep that transaction short.
 */
const PROMOTION_RETRY = { maxAttempts: 3, budgetMs: 5_000, initialDelayMs: 500, maxDelayMs: 2_000 };

export interface PromoterOptions {
  sql: Sql;
  logger: Logger;
  storage: () => S3Client;
  /** Told after jobs completed, or failed because an output did not match its report, with the loops to wake. */
  promoted: (wake: Loop[]) => void;
  maxAttempts: number;
  tickMs?: number;
}

export class Promoter extends WakeableLoop {
  readonly counters = { promoted: 0, failures: 0 };

  constructor(private readonly options: PromoterOptions) {
    super(options, "promotion");
  }

  protected async pass(): Promise<boolean> {
    return (await this.promoteOnce()) > 0;
  }

  /** Promotes what it can lock; returns how many jobs it completed or failed. */
  async promoteOnce(): Promise<number> {
    const staged: PromotedOutput[] = [];
    const wake: Loop[] = [];
    const promoted: { jobId: string; attemptId: string }[] = [];
    const finished = await this.options.sql.begin(async (tx) => {
      let count = 0;
      for (const attempt of await lockPendingPromotions(tx, 5)) {
        const plan = attempt.executionPlan;
        try {
          const outputs = await this.promote(plan, attempt.result.outputs, {
            alreadyPromoted: new Set(attempt.promotedOutputIds),
            promoted: (outputId) => markOutputPromoted(tx, attempt.attemptId, outputId),
          });
          if (plan.manifestUri) {
            const manifest = {
              jobId: attempt.jobId,
              attemptId: attempt.attemptId,
              attemptNumber: attempt.attemptNumber,
              completedAt: new Date().toISOString(),
              outputs,
              logsUri: attempt.result.logsUri,
            };
            await putSmallObject(
              this.options.storage(),
              plan.manifestUri,
              JSON.stringify(manifest, null, 2),
              "application/json",
              this.storageOptions,
            );
            await recordManifest(tx, attempt.attemptId, manifest);
          }
        } catch (err) {
          this.counters.failures++;
          if (!(err instanceof CopyMismatchError || err instanceof CommitMismatchError)) {
            this.options.logger.warn("cannot promote outputs yet; retrying", { jobId: attempt.jobId, err });
            continue;
          }
          this.options.logger.error("an output is not what the attempt reported; the job fails", {
            jobId: attempt.jobId,
            attemptId: attempt.attemptId,
            err,
          });
          const failed = await applyTrigger(tx, attempt, "promotion-failed", {
            maxAttempts: this.options.maxAttempts,
            input: { failure: { message: err.message } },
          });
          if (failed.kind === "refused") this.refused(attempt, failed.reason);
          else {
            wake.push(...failed.transition.effects.wake);
            count++;
          }
          continue;
        }
        const done = await applyTrigger(tx, attempt, "promotion-done");
        if (done.kind === "refused") {
          this.refused(attempt, done.reason);
          continue;
        }
        wake.push(...done.transition.effects.wake);
        staged.push(...attempt.result.outputs.filter((output) => !output.multipart));
        promoted.push({ jobId: attempt.jobId, attemptId: attempt.attemptId });
        count++;
      }
      return count;
    });
    this.counters.promoted += promoted.length;
    // After the commit: a job logged as completed is completed.
    for (const job of promoted) this.options.logger.info("job completed", { ...job, jobState: "COMPLETED" });
    if (finished > 0) this.options.promoted(wake);
    await this.discard(staged);
    return finished;
  }

  private refused(attempt: { jobId: string; attemptId: string }, reason: string): void {
    const { jobId, attemptId } = attempt;
    this.options.logger.warn("the lifecycle table refuses to finish a promotion", {
      jobId,
      attemptId,
      reason,
    });
  }

  private get storageOptions(): RetryOptions {
    return { retry: PROMOTION_RETRY, logger: this.options.logger };
  }

  private async promote(
    plan: ExecutionPlan,
    reported: PromotedOutput[],
    progress: { alreadyPromoted: ReadonlySet<string>; promoted(outputId: string): Promise<void> },
  ) {
    const destinations = new Map(plan.outputs.map((output) => [output.id, output.destinationUri]));
    const promoted = [];
    for (const { multipart, ...output } of reported) {
      const destination = destinations.get(output.id);
      if (!destination) throw new Error(`output ${output.id} is not in the plan`);
      if (!progress.alreadyPromoted.has(output.id)) {
        if (multipart) await this.commit({ ...output, multipart }, destination);
        else {
          await copyObject(this.options.storage(), output.uri, destination, {
            ...this.storageOptions,
            expectedBytes: output.bytes,
          });
        }
        await progress.promoted(output.id);
      }
      promoted.push({ ...output, uri: destination });
    }
    return promoted;
  }

  /** Completes an output's upload at its destination with the reported parts. */
  private async commit(
    output: PromotedOutput & Required<Pick<PromotedOutput, "multipart">>,
    destination: string,
  ): Promise<void> {
    if (output.uri !== destination) {
      throw new CommitMismatchError(
        output.uri,
        `a multipart output must be uploaded at its destination ${destination}`,
      );
    }
    const committed = await commitMultipartUpload(
      this.options.storage(),
      { uri: destination, bytes: output.bytes, ...output.multipart },
      this.storageOptions,
    );
    if (committed.recognised || committed.abortedUploads > 0) {
      this.options.logger.info("multipart output committed", {
        uri: destination,
        uploadId: output.multipart.uploadId,
        recognised: committed.recognised,
        abortedUploads: committed.abortedUploads,
      });
    }
  }

  /**
   * Removes what no one will promote: staged objects, and (multipart) uploads left incomplete at
   * their destinations. A failure only leaves garbage behind (the bucket's lifecycle rule
   * removes incomplete uploads), so it is logged.
   */
  async discard(outputs: readonly PromotedOutput[]): Promise<void> {
    for (const { uri, multipart } of outputs) {
      const discarded = multipart
        ? abortMultipartUpload(this.options.storage(), uri, multipart.uploadId, this.storageOptions)
        : deleteObject(this.options.storage(), uri, this.storageOptions);
      await discarded.catch((err) =>
        this.options.logger.warn("cannot discard an output no one will promote", { uri, err }),
      );
    }
  }
}
