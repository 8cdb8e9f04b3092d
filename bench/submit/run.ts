/**
 * Submit throughput: the Manager on each runtime against its peers on the same PostgreSQL.
 * Every contender is started first, then each concurrency level measures them one after the
 * other: background load on a shared machine drifts over minutes, and this way it skews the
 * numbers of one level alike instead of favouring whoever ran in a quiet minute.
 */
import type { Attempt, BenchContext } from "../scenario.ts";
import { loadOptions } from "../settings.ts";
import { checkpoint } from "../shared/database.ts";
import type { Contender, LoadResult } from "../shared/load.ts";
import { startSubmitContender } from "./manager.ts";
import { startPgBossContender, startRawInsertContender } from "./peers.ts";
import type { BenchRuntime } from "./settings.ts";

/** What is compared at each concurrency level: the Manager per runtime and the two peers. */
export type ContenderKey = BenchRuntime | "pgBoss" | "rawInsert";

/** Per contender, its result at each concurrency level it measured. */
export type SubmitResult = Partial<Record<ContenderKey, LoadResult[]>>;

export async function benchSubmit(context: BenchContext, attempt: Attempt): Promise<SubmitResult> {
  const settings = context.settings.submit;
  const starters: [ContenderKey, () => Promise<Contender>][] = [
    ...settings.runtimes.map((runtime): [ContenderKey, () => Promise<Contender>] => [
      runtime,
      () => startSubmitContender(context, runtime),
    ]),
    ["pgBoss", () => startPgBossContender(context)],
    ["rawInsert", () => startRawInsertContender(context)],
  ];
  const contenders: [ContenderKey, Contender][] = [];
  for (const [key, start] of starters) {
    const contender = await attempt(`start ${key}`, start);
    if (contender) contenders.push([key, contender]);
  }
  const result: SubmitResult = {};
  for (const concurrency of settings.concurrency) {
    const options = loadOptions(context.settings, concurrency, settings.seconds);
    for (const [key, contender] of contenders) {
      await checkpoint(context.admin, context.log);
      const measured = await attempt(`${key} x${concurrency}`, () => contender.measure(options));
      if (!measured) continue;
      context.log(
        `${key} x${concurrency}: ${measured.perSecond.toFixed(0)}/s, p99 ${measured.p99Ms.toFixed(1)} ms, ${measured.failed} errors`,
      );
      result[key] = [...(result[key] ?? []), measured];
    }
  }
  for (const [key, contender] of contenders) await attempt(`stop ${key}`, contender.stop);
  return result;
}
