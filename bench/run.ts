/**
 * `npm run bench`: submit throughput on Node and Deno, the same against pg-boss and raw
 * INSERTs, list latency with 100k and 1M jobs, the outbox relay, the heartbeat monitor with
 * 1,000 Workers, SSE fan-out to 1,000 and 10,000 subscribers, and real jobs on Worker agents:
 * a 720p transcode against plain ffmpeg, dispatch latency and 1,000 tiny jobs, and a 1 GiB
 * upload through the Worker's uploader against lib-storage on Swift's s3api. Prints
 * markdown; asserts nothing. BENCH_SCENARIOS picks which run.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { configSchema } from "../manager/src/config.ts";
import { TestIssuer } from "../tests/harness/oidc.ts";
import { findOrStartServices } from "../tests/harness/services.ts";
import { Cleanup } from "./cleanup.ts";
import { checkpoint, openAdminSql } from "./database.ts";
import { benchDispatch } from "./dispatch.ts";
import { benchHeartbeats } from "./heartbeats.ts";
import { benchList } from "./list.ts";
import type { Contender } from "./load.ts";
import { REPOSITORY_ROOT } from "./manager-process.ts";
import { benchOverhead } from "./overhead.ts";
import { startPgBossContender, startRawInsertContender } from "./peers.ts";
import { benchRelay } from "./relay.ts";
import {
  dispatchSection,
  heartbeatSection,
  listSection,
  overheadSection,
  peersSection,
  type Results,
  ratioSection,
  relaySection,
  sseSection,
  submitSection,
  type ThroughputKey,
  table,
  targetsSection,
  tinyJobsSection,
  uploadSection,
} from "./report.ts";
import { type BenchContext, readSettings, type ScenarioName, type Settings } from "./settings.ts";
import { benchSse } from "./sse.ts";
import { startSubmitContender } from "./submit.ts";
import { benchTinyJobs } from "./tiny-jobs.ts";
import { benchUpload } from "./upload.ts";

const TOKEN_LIFETIME_S = 24 * 3600;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const print = (markdown: string) => process.stdout.write(`${markdown}\n\n`);

const loadAverage = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(" / ");

function denoVersion(): string {
  try {
    const output = execFileSync(join(REPOSITORY_ROOT, "node_modules/.bin/deno"), ["--version"]);
    return output.toString("utf8").split("\n")[0] ?? "unknown";
  } catch (err) {
    return `unavailable (${err instanceof Error ? err.message : String(err)})`;
  }
}

async function header(context: BenchContext, settings: Settings, managerPoolMax: number): Promise<string> {
  const [server] = await context.admin<{ serverVersion: string }[]>`
    select current_setting('server_version') as "serverVersion"`;
  const cpus = os.cpus();
  const rows = [
    ["date", new Date().toISOString()],
    [
      "machine",
      `${cpus.length} x ${cpus[0]?.model ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    ],
    ["Node", process.version],
    [
      "Node 20 (submit, node20)",
      settings.scenarios.includes("submit") && settings.runtimes.includes("node20")
        ? `${settings.node20Path} (${execFileSync(settings.node20Path as string, ["--version"], { encoding: "utf8" }).trim()})`
        : "not run",
    ],
    ["scenarios", settings.scenarios.join(", ")],
    [
      "Deno",
      settings.scenarios.includes("submit") && settings.runtimes.includes("deno") ? denoVersion() : "not run",
    ],
    ["PostgreSQL", server?.serverVersion ?? "unknown"],
    ["Manager DATABASE_POOL_MAX (pg-boss uses the same)", String(managerPoolMax)],
    [
      "per level",
      `${settings.warmupSeconds} s warm-up + ${settings.seconds} s measured; list: ${settings.warmupSeconds} s + ${settings.listSeconds} s per filter`,
    ],
    ["load generator", "closed loop in this process (node:http keep-alive), on the same cores"],
    // Anything else running on the machine shows up here and in every number below.
    ["load average at start (1/5/15 min)", loadAverage()],
  ];
  return `# TJM bench\n\n${table(["", ""], rows)}`;
}

type Scenario = <T>(name: string, work: () => Promise<T>) => Promise<T | undefined>;

/**
 * Every contender is started first, then each concurrency level measures them one after
 * the other: background load on a shared machine drifts over minutes, and this way it
 * skews the numbers of one level alike instead of favouring whoever ran in a quiet minute.
 */
async function compareThroughput(
  context: BenchContext,
  managerPoolMax: number,
  results: Results,
  scenario: Scenario,
): Promise<void> {
  const starters: [ThroughputKey, () => Promise<Contender>][] = [
    ...context.settings.runtimes.map((runtime): [ThroughputKey, () => Promise<Contender>] => [
      runtime,
      () => startSubmitContender(context, runtime),
    ]),
    ["pgBoss", () => startPgBossContender(context, managerPoolMax)],
    ["rawInsert", () => startRawInsertContender(context)],
  ];
  const contenders: [ThroughputKey, Contender][] = [];
  for (const [key, start] of starters) {
    const contender = await scenario(`start ${key}`, start);
    if (contender) contenders.push([key, contender]);
  }
  for (const concurrency of context.settings.concurrency) {
    for (const [key, contender] of contenders) {
      await checkpoint(context.admin, context.log);
      const result = await scenario(`${key} x${concurrency}`, () => contender.measure(concurrency));
      if (!result) continue;
      context.log(
        `${key} x${concurrency}: ${result.perSecond.toFixed(0)}/s, p99 ${result.p99Ms.toFixed(1)} ms, ${result.failed} errors`,
      );
      results.throughput[key] = [...(results.throughput[key] ?? []), result];
    }
  }
  for (const [, contender] of contenders) await contender.stop();
}

async function main(): Promise<void> {
  const settings = readSettings(process.env);
  const managerPoolMax = configSchema.shape.DATABASE_POOL_MAX.parse(process.env.DATABASE_POOL_MAX);
  const cleanup = new Cleanup();
  cleanup.runOnSignals(log);
  const started = performance.now();
  const results: Results = { throughput: {}, failures: [] };
  // A failed scenario is reported and the others still run.
  const scenario: Scenario = async (name, work) => {
    try {
      return await work();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`${name} failed: ${message}`);
      results.failures.push(`${name}: ${message}`);
      return undefined;
    }
  };

  try {
    const services = await findOrStartServices(log);
    cleanup.defer("stop the services this run started", () => services.stop());
    const admin = openAdminSql(services.databaseUrl);
    cleanup.defer("close the admin connection", () => admin.end({ timeout: 5 }));
    const issuer = await TestIssuer.start();
    cleanup.defer("stop the OIDC issuer", () => issuer.close());
    const context: BenchContext = {
      settings,
      databaseUrl: services.databaseUrl,
      natsUrl: services.natsUrl,
      issuerUrl: issuer.issuer,
      token: await issuer.token({ expiresInSeconds: TOKEN_LIFETIME_S }),
      runId: randomBytes(4).toString("hex"),
      admin,
      cleanup,
      log,
    };
    print(await header(context, settings, managerPoolMax));

    const selected = (name: ScenarioName) => settings.scenarios.includes(name);
    if (selected("submit")) {
      await compareThroughput(context, managerPoolMax, results, scenario);
      print(submitSection(results));
      print(peersSection(results));
      print(ratioSection(results, settings.concurrency));
    }
    if (selected("list")) {
      results.list = await scenario("list", () => benchList(context));
      print(listSection(results));
    }
    if (selected("relay")) {
      results.relay = await scenario("relay", () => benchRelay(context));
      print(relaySection(results));
    }
    if (selected("heartbeats")) {
      results.heartbeats = await scenario("heartbeats", () => benchHeartbeats(context));
      print(heartbeatSection(results));
    }
    if (selected("sse")) {
      results.sse = await scenario("sse", () => benchSse(context));
      print(sseSection(results));
    }
    if (selected("overhead")) {
      results.overhead = await scenario("overhead", () => benchOverhead(context));
      print(overheadSection(results));
    }
    if (selected("dispatch")) {
      results.dispatch = await scenario("dispatch", () => benchDispatch(context));
      print(dispatchSection(results));
    }
    if (selected("tiny-jobs")) {
      results.tinyJobs = await scenario("tiny-jobs", () => benchTinyJobs(context));
      print(tinyJobsSection(results));
    }
    if (selected("upload")) {
      results.upload = await scenario("upload", () => benchUpload(context));
      print(uploadSection(results));
    }
    print(targetsSection(results, settings.concurrency, settings.scenarios));
  } catch (err) {
    results.failures.push(err instanceof Error ? err.message : String(err));
  } finally {
    await cleanup.run(log);
  }
  if (results.failures.length > 0) {
    print(`## Failures\n\n${results.failures.map((failure) => `- ${failure}`).join("\n")}`);
    process.exitCode = 1;
  }
  print(
    `Finished in ${((performance.now() - started) / 1000).toFixed(0)} s; load average at end: ${loadAverage()}`,
  );
}

await main();
