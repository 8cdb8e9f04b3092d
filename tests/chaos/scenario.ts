/**
 * What every fault scenario shares: how many runs the profile asks for, the seed its random
 * choices come from, the facts the checker judges (read from the Manager's schema, the store's
 * request log and the Workers' logs), and the result it leaves for `npm run chaos`'s table.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AgentProcess } from "@tjm/devstack/agent-process";
import { expect } from "vitest";
import type { Sql } from "../../manager/src/platform/db.ts";
import { type ObjectStore, readObject, sha256 } from "../harness/media-jobs.ts";
import type { S3RequestLog } from "../harness/s3-request-log.ts";
import { BAD_VERDICTS, type JobFacts, type Judgement, judge, type Tally, tally } from "./checker.ts";

/** `full` (the default): the targets' run counts; `ci`: the subset `.ci/run` runs. */
export type ChaosProfile = "full" | "ci";

export function chaosProfile(): ChaosProfile {
  const profile = process.env.CHAOS_PROFILE ?? "full";
  if (profile !== "full" && profile !== "ci") {
    throw new Error(`CHAOS_PROFILE must be full or ci, not ${JSON.stringify(profile)}`);
  }
  return profile;
}

/** Whether a process (an agent's ffmpeg, say) is still running. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** How many times a scenario runs under the current profile. */
export function chaosRuns(counts: Record<ChaosProfile, number>): number {
  return counts[chaosProfile()];
}

/**
 * A seeded random source (mulberry32): CHAOS_SEED repeats a run's choices; without it a seed is
 * drawn, and every scenario prints the one it used.
 */
export function seededRandom(scenario: string): { seed: number; next(): number; pick<T>(items: T[]): T } {
  const seed = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : Math.floor(Math.random() * 2 ** 31);
  if (!Number.isSafeInteger(seed))
    throw new Error(`CHAOS_SEED must be an integer, not ${process.env.CHAOS_SEED}`);
  console.info(`[chaos] ${scenario}: seed ${seed} (CHAOS_SEED=${seed} repeats its choices)`);
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { seed, next, pick: (items) => items[Math.floor(next() * items.length)] as (typeof items)[number] };
}

/** A job a scenario submitted (acknowledged with 201), and the objects it must write. */
export interface SubmittedJob {
  jobId: string;
  /** /bucket/key of each destination and of the manifest. */
  destinations: string[];
  /** Its fault must not cost it an attempt (see JobFacts). */
  keepsItsAttempt?: boolean;
}

export interface FactOptions {
  /** The Manager completes uploads at the destinations (S3_COMMIT=multipart). */
  multipartCommit?: boolean;
  /** The store itself (not the log): each destination is read back, to compare with what its attempt reported. */
  objects?: ObjectStore;
}

/**
 * The facts of each job: its rows (read from `sql`, the Manager's schema), the writes of its
 * destinations in `store`'s log, and each of its attempts' runs in every process of `agents`
 * (killed and restarted instances included).
 */
export async function collectFacts(
  sql: Sql,
  store: S3RequestLog,
  jobs: SubmittedJob[],
  agents: AgentProcess[],
  options: FactOptions = {},
): Promise<JobFacts[]> {
  const jobIds = jobs.map((job) => job.jobId);
  const rows = await sql<
    { id: string; state: string; currentAttemptId: string; destinationUris: Record<string, string> }[]
  >`
    select id, state, current_attempt_id,
      coalesce((select jsonb_object_agg(o->>'id', o->>'destinationUri')
                from jsonb_array_elements(execution_plan->'outputs') as o), '{}') as destination_uris
    from jobs where id = any(${jobIds}::uuid[])`;
  const attempts = await sql<
    {
      id: string;
      jobId: string;
      state: string;
      failureCode: string | null;
      uploadIds: string[];
      reported: { id: string; sha256: string }[];
    }[]
  >`
    select id, job_id, state, failure_code,
      array(select o->'multipart'->>'uploadId' from jsonb_array_elements(coalesce(result->'outputs', '[]'))
            as o where o ? 'multipart') as upload_ids,
      coalesce((select jsonb_agg(jsonb_build_object('id', o->>'id', 'sha256', o->>'sha256'))
                from jsonb_array_elements(coalesce(result->'outputs', '[]')) as o), '[]') as reported
    from attempts where job_id = any(${jobIds}::uuid[])
    order by attempt_number`;
  const storedSha256 = async (path: string): Promise<string | null> => {
    try {
      return await sha256(await readObject(options.objects as ObjectStore, `s3:/${path}`));
    } catch (error) {
      if ((error as { name?: unknown }).name === "NoSuchKey") return null;
      throw error;
    }
  };
  const stored = new Map<string, string | null>();
  if (options.objects) {
    for (const path of jobs.flatMap((job) => job.destinations)) stored.set(path, await storedSha256(path));
  }
  const logged = (msg: string) => {
    const counts = new Map<string, number>();
    for (const agent of agents) {
      for (const line of agent.logs) {
        if (line.msg === msg && typeof line.attemptId === "string") {
          counts.set(line.attemptId, (counts.get(line.attemptId) ?? 0) + 1);
        }
      }
    }
    return counts;
  };
  const encoded = logged("encoding");
  const completed = logged("attempt completed");
  return jobs.map((job) => {
    const row = rows.find((candidate) => candidate.id === job.jobId);
    const own = attempts.filter((attempt) => attempt.jobId === job.jobId);
    const destinationOf = (outputId: string) => row?.destinationUris[outputId]?.replace(/^s3:\//, "");
    return {
      jobId: job.jobId,
      state: row?.state,
      currentAttemptId: row?.currentAttemptId,
      attempts: own.map(({ id, state, failureCode, uploadIds, reported }) => ({
        id,
        state,
        failureCode,
        uploadIds,
        outputs: reported.flatMap((output) => {
          const path = destinationOf(output.id);
          return path ? [{ path, sha256: output.sha256 }] : [];
        }),
      })),
      destinations: job.destinations.map((path) => ({
        path,
        writes: store.writesTo(path).map((write) => {
          const uploadId = write.method === "POST" ? write.query.get("uploadId") : null;
          return {
            copySource: write.copySource,
            ...(options.multipartCommit && uploadId ? { uploadId } : {}),
          };
        }),
        ...(stored.has(path) ? { sha256: stored.get(path) as string | null } : {}),
      })),
      executions: own.map((attempt) => ({
        attemptId: attempt.id,
        encoded: encoded.get(attempt.id) ?? 0,
        completed: completed.get(attempt.id) ?? 0,
      })),
      ...(job.keepsItsAttempt ? { keepsItsAttempt: true } : {}),
    };
  });
}

/** A duration the scenario measured, summarised over its runs. */
export interface Recovery {
  what: string;
  samplesMs: number[];
}

export interface ScenarioResult {
  scenario: string;
  /** Runs of the fault (a job faulted, an outage, a kill). */
  runs: number;
  /** Verdicts over every job the scenario submitted. */
  jobs: Tally;
  /** Destinations written again from the same staged object (see checker.ts): not bad, shown. */
  rewrites: number;
  seed: number;
  durationMs: number;
  recoveries: Recovery[];
  /** What else the run observed (kills delivered, points reached). */
  notes: string[];
}

/**
 * Judges the jobs, records the result where `npm run chaos` collects it (CHAOS_RESULTS_DIR),
 * prints it, and fails the test on any bad verdict, naming the first jobs and why.
 */
export async function reportScenario(
  result: Omit<ScenarioResult, "jobs" | "rewrites">,
  facts: JobFacts[],
): Promise<ScenarioResult> {
  const judgements = facts.map(judge);
  const full: ScenarioResult = {
    ...result,
    jobs: tally(judgements),
    rewrites: judgements.reduce((sum, judgement) => sum + judgement.rewrites, 0),
  };
  const directory = process.env.CHAOS_RESULTS_DIR;
  if (directory) {
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, `${result.scenario}.json`), JSON.stringify(full, null, 2));
  }
  console.info(`[chaos] ${result.scenario}: ${JSON.stringify(full)}`);
  const bad: Judgement[] = judgements.filter((judgement) => judgement.verdict !== "ok");
  // Printed too: a failure in the scenario's clean-up would otherwise hide the assertion's message.
  for (const judgement of bad.slice(0, 10))
    console.warn(`[chaos] ${result.scenario}: ${JSON.stringify(judgement)}`);
  expect(
    bad.slice(0, 10),
    `${bad.length} job(s) judged ${BAD_VERDICTS.join("/")} (the first 10 shown)`,
  ).toEqual([]);
  return full;
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
