/**
 * argon2id cost on this machine: ms per hash for a grid of parameters at or above OWASP's minimum
 * (m ≥ 19 MiB, t ≥ 2, p = 1), then the chosen parameters (PASSWORD_HASH_PARAMETERS) under
 * concurrent hashing (latency, throughput, peak RSS growth) and the two sign-in paths that must
 * take the same time: a wrong password and an unknown account.
 */
import {
  type Argon2Parameters,
  createPasswordHasher,
  PASSWORD_HASH_PARAMETERS,
} from "../../manager/src/identity/password-hashing.ts";
import type { Attempt, BenchContext } from "../scenario.ts";
import { median } from "../shared/stats.ts";

const MEMORY_MIB = [19, 46, 64, 128];
const PASSES = [2, 4, 8];
const SAMPLES = 7;
const CONCURRENCY = [1, 2, 4, 8];
const CONCURRENT_ROUNDS = 4;
const RSS_POLL_MS = 5;

export interface GridRow {
  parameters: Argon2Parameters;
  medianMs: number;
  maxMs: number;
}

export interface ConcurrencyRow {
  concurrency: number;
  medianMs: number;
  hashesPerSecond: number;
  peakRssGrowthBytes: number;
}

export interface Argon2Result {
  chosen: Argon2Parameters;
  grid: GridRow[];
  concurrency: ConcurrencyRow[] | undefined;
  wrongPasswordMs: number | undefined;
  unknownAccountMs: number | undefined;
}

export const sameParameters = (a: Argon2Parameters, b: Argon2Parameters) =>
  a.memoryCost === b.memoryCost && a.timeCost === b.timeCost && a.parallelism === b.parallelism;

/** The grid, and the chosen parameters too when they lie outside it. */
function parameterSets(): Argon2Parameters[] {
  const grid = MEMORY_MIB.flatMap((memoryMiB) =>
    PASSES.map((timeCost) => ({ memoryCost: memoryMiB * 1024, timeCost, parallelism: 1 })),
  );
  return grid.some((parameters) => sameParameters(parameters, PASSWORD_HASH_PARAMETERS))
    ? grid
    : [...grid, PASSWORD_HASH_PARAMETERS];
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function measureGridRow(parameters: Argon2Parameters): Promise<GridRow> {
  const hasher = createPasswordHasher(parameters);
  await hasher.hash("warm-up");
  const samples: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample += 1)
    samples.push(await timed(() => hasher.hash(`correct horse battery staple ${sample}`)));
  return { parameters, medianMs: median(samples), maxMs: Math.max(...samples) };
}

async function measureConcurrency(concurrency: number): Promise<ConcurrencyRow> {
  const hasher = createPasswordHasher(PASSWORD_HASH_PARAMETERS);
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const poll = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, RSS_POLL_MS);
  const latencies: number[] = [];
  const start = performance.now();
  try {
    for (let round = 0; round < CONCURRENT_ROUNDS; round += 1)
      latencies.push(
        ...(await Promise.all(
          Array.from({ length: concurrency }, (_, index) =>
            timed(() => hasher.hash(`password ${round} ${index}`)),
          ),
        )),
      );
  } finally {
    clearInterval(poll);
  }
  const elapsedSeconds = (performance.now() - start) / 1000;
  return {
    concurrency,
    medianMs: median(latencies),
    hashesPerSecond: latencies.length / elapsedSeconds,
    peakRssGrowthBytes: peak - baseline,
  };
}

async function measureSignInPaths(): Promise<{ wrongPasswordMs: number; unknownAccountMs: number }> {
  const hasher = createPasswordHasher(PASSWORD_HASH_PARAMETERS);
  const stored = await hasher.hash("the account's real password");
  await hasher.verifyUnknownAccount("warm-up");
  const wrong: number[] = [];
  const unknown: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    wrong.push(await timed(() => hasher.verify(stored, `guess ${sample}`)));
    unknown.push(await timed(() => hasher.verifyUnknownAccount(`guess ${sample}`)));
  }
  return { wrongPasswordMs: median(wrong), unknownAccountMs: median(unknown) };
}

export async function benchArgon2(context: BenchContext, attempt: Attempt): Promise<Argon2Result> {
  const grid: GridRow[] = [];
  for (const parameters of parameterSets()) {
    const row = await measureGridRow(parameters);
    context.log(
      `argon2id m=${parameters.memoryCost / 1024} MiB t=${parameters.timeCost}: ${row.medianMs.toFixed(1)} ms`,
    );
    grid.push(row);
  }
  const concurrency = await attempt("argon2 concurrency", async () => {
    const rows: ConcurrencyRow[] = [];
    for (const level of CONCURRENCY) rows.push(await measureConcurrency(level));
    return rows;
  });
  const signIn = await attempt("argon2 sign-in paths", measureSignInPaths);
  return {
    chosen: PASSWORD_HASH_PARAMETERS,
    grid,
    concurrency,
    wrongPasswordMs: signIn?.wrongPasswordMs,
    unknownAccountMs: signIn?.unknownAccountMs,
  };
}
