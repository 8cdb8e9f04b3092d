/**
 * The fault suite's judge, pure: what is known of one job once a scenario is over (the
 * Manager's rows, the store's request log, the Workers' logs) in, one verdict out.
 *
 * - stale-write-accepted: something a superseded attempt did took effect — an attempt other
 *   than the job's current one SUCCEEDED, or a destination holds an object staged by an
 *   attempt other than the one that succeeded, or (multipart commit) a completed upload that
 *   the succeeded attempt's accepted report did not name.
 * - duplicate-output: work ran or landed twice — more than one attempt SUCCEEDED, a
 *   destination was written from more than one attempt's staged objects, or one attempt was
 *   encoded or completed more than once across the Workers' processes.
 *
 * A destination written again from the same staged object (the promoter repeating a copy whose
 * commit a killed Manager never made) is the same output, not a duplicate: it is counted
 * apart, as a rewrite, so the table shows how often it happens.
 * - lost: an acknowledged job the Manager does not know, one that ended other than COMPLETED,
 *   a COMPLETED one with a destination never written, or one whose fault must not cost it an
 *   attempt (storage down while it reads its input: the encode waits) that needed another.
 * - corrupt-output: a COMPLETED job whose destination holds other bytes than the output its
 *   succeeded attempt reported (by SHA-256; judged where the scenario read the objects back).
 * - stuck: not in a terminal state when the scenario gave up waiting. Such a job's destination
 *   writes are not judged: its rows are read before the store's log, so a write can show
 *   before the success that allowed it.
 * - ok: none of these.
 *
 * A job gets one verdict, with the reason, checked in this order: what the rows and the Workers'
 * logs show (a stale success, two successes, a second run), stuck, what the store's log shows (a
 * stale write, writes from two sources), lost, corrupt-output, ok.
 */

export const VERDICTS = [
  "ok",
  "lost",
  "stuck",
  "duplicate-output",
  "stale-write-accepted",
  "corrupt-output",
] as const;
export type Verdict = (typeof VERDICTS)[number];
export const BAD_VERDICTS = VERDICTS.filter((verdict) => verdict !== "ok");

const TERMINAL = new Set(["COMPLETED", "FAILED", "CANCELLED"]);

export interface AttemptFacts {
  id: string;
  state: string;
  failureCode?: string | null;
  /** The multipart uploads its accepted completed report named (multipart commit). */
  uploadIds?: string[];
  /** What its accepted completed report said it produced: each output's destination (/bucket/key) and SHA-256. */
  outputs?: { path: string; sha256: string }[];
}

export interface DestinationFacts {
  /** /bucket/key */
  path: string;
  /**
   * Each successful write of the object, with its copy source when it was a copy (a promotion
   * from `/bucket/.tjm-staging/<jobId>/<attemptId>/<outputId>`), or the upload it completed
   * under a multipart commit; a manifest has neither.
   */
  writes: { copySource: string | undefined; uploadId?: string }[];
  /** SHA-256 of the object in the store when the scenario ended (null: none there); absent when not read. */
  sha256?: string | null;
}

export interface JobFacts {
  /** The job's id, known once its submission was acknowledged. */
  jobId: string;
  /** The job's state in PostgreSQL; undefined when the Manager has no such job. */
  state: string | undefined;
  currentAttemptId: string | undefined;
  attempts: AttemptFacts[];
  destinations: DestinationFacts[];
  /** How many times the Workers' processes logged each of the job's attempts encoding and completed. */
  executions: { attemptId: string; encoded: number; completed: number }[];
  /**
   * Its fault must not cost it an attempt: storage went down while it read its input, and the
   * encode waits for the store instead of failing. Another attempt means its encode was lost.
   */
  keepsItsAttempt?: boolean;
}

export interface Judgement {
  jobId: string;
  verdict: Verdict;
  reason: string;
  /** Writes of the job's destinations beyond the first, each from the same source as the first. */
  rewrites: number;
}

/** The attempt id in a staging copy source, or undefined when the source is not a staging key. */
export function stagedBy(copySource: string): string | undefined {
  const match = /^\/?[^/]+\/\.tjm-staging\/[^/]+\/([^/]+)\/[^/]+$/.exec(copySource);
  return match?.[1];
}

export function judge(job: JobFacts): Judgement {
  const rewrites = job.destinations.reduce(
    (sum, destination) => sum + Math.max(0, destination.writes.length - 1),
    0,
  );
  const verdict = (kind: Verdict, reason: string): Judgement => ({
    jobId: job.jobId,
    verdict: kind,
    reason,
    rewrites,
  });
  const succeeded = job.attempts.filter((attempt) => attempt.state === "SUCCEEDED");
  /** The attempt a write came from, when it can tell: a staging copy's, or a committed upload's. */
  const writer = (write: DestinationFacts["writes"][number]): string | undefined => {
    if (write.copySource !== undefined) return stagedBy(write.copySource);
    if (write.uploadId === undefined) return undefined;
    const named = job.attempts.find((attempt) => attempt.uploadIds?.includes(write.uploadId as string));
    return named?.id ?? `an upload no accepted report named (${write.uploadId})`;
  };

  // What one read of the rows shows, and what the Workers' logs counted: true whenever read.
  const staleSuccess = succeeded.find((attempt) => attempt.id !== job.currentAttemptId);
  if (staleSuccess) {
    return verdict(
      "stale-write-accepted",
      `attempt ${staleSuccess.id} SUCCEEDED but the current attempt is ${job.currentAttemptId}`,
    );
  }
  if (succeeded.length > 1) {
    return verdict("duplicate-output", `${succeeded.length} attempts SUCCEEDED`);
  }
  const rerun = job.executions.find((execution) => execution.encoded > 1 || execution.completed > 1);
  if (rerun) {
    return verdict(
      "duplicate-output",
      `attempt ${rerun.attemptId} was encoded ${rerun.encoded} and completed ${rerun.completed} times`,
    );
  }
  // The rows are read before the store's log: a job still moving may show a promotion whose
  // attempt's success came after the read. Its writes say nothing yet; it did not finish.
  if (job.state !== undefined && !TERMINAL.has(job.state)) return verdict("stuck", `still ${job.state}`);

  for (const destination of job.destinations) {
    for (const write of destination.writes) {
      const stager = writer(write);
      if (stager !== undefined && !succeeded.some((attempt) => attempt.id === stager)) {
        return verdict(
          "stale-write-accepted",
          `${destination.path} was promoted from attempt ${stager}, which did not succeed`,
        );
      }
    }
  }

  for (const destination of job.destinations) {
    const sources = new Set(
      destination.writes.map((write) => writer(write) ?? write.copySource ?? "a direct write"),
    );
    if (sources.size > 1) {
      return verdict(
        "duplicate-output",
        `${destination.path} was written from ${[...sources].join(" and ")}`,
      );
    }
  }
  if (job.state === undefined) return verdict("lost", "the Manager has no such job");
  if (job.state !== "COMPLETED") {
    const attempts = job.attempts.map((attempt) => attempt.failureCode ?? attempt.state).join(", ");
    return verdict("lost", `the job ended ${job.state} (attempts: ${attempts})`);
  }
  const missing = job.destinations.find((destination) => destination.writes.length === 0);
  if (missing) return verdict("lost", `the job is COMPLETED but ${missing.path} was never written`);
  if (job.keepsItsAttempt && job.attempts.length > 1) {
    const attempts = job.attempts.map((attempt) => attempt.failureCode ?? attempt.state).join(", ");
    return verdict("lost", `its encode was lost: it took ${job.attempts.length} attempts (${attempts})`);
  }
  for (const output of succeeded[0]?.outputs ?? []) {
    const stored = job.destinations.find((destination) => destination.path === output.path)?.sha256;
    if (stored !== undefined && stored !== output.sha256) {
      return verdict(
        "corrupt-output",
        `${output.path} holds ${stored ?? "nothing"}, not the reported output ${output.sha256}`,
      );
    }
  }
  return verdict("ok", "COMPLETED once");
}

export type Tally = Record<Verdict, number>;

export function tally(judgements: Judgement[]): Tally {
  const counts = Object.fromEntries(VERDICTS.map((verdict) => [verdict, 0])) as Tally;
  for (const judgement of judgements) counts[judgement.verdict]++;
  return counts;
}
