/**
 * `npm run bench`: submit throughput on Node and Deno, the same against pg-boss and raw
 * INSERTs, list latency with 100k and 1M jobs, the outbox relay, the heartbeat monitor with
 * 1,000 Workers, SSE fan-out to 1,000 and 10,000 subscribers, and real jobs on Worker agents:
 * a 720p transcode against plain ffmpeg, dispatch latency (on one NATS server and on a
 * three-node cluster) and 1,000 tiny jobs, and a 1 GiB upload through the Worker's uploader
 * against lib-storage on Swift's s3api, argon2id costs,
 * the built-in OpenID provider (sign-ins, client_credentials, the standing check's cost), and
 * the Admin console (the delay its SSE relay adds for 1,000 sessions, the jobs view's page load),
 * the Manager's Prometheus metrics (submit with them on and off, a scrape at 1M jobs), and
 * submit throughput on one Manager against two on the same PostgreSQL, and messages sent per
 * second from the message outbox to a local SMTP server and SMS webhook, and logging out a browser
 * that remembers 5 accounts signed in to 3 clients each.
 * Prints markdown; asserts nothing. BENCH_SCENARIOS picks which run; each lives in its folder.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { TestIssuer } from "@tjm/devstack/oidc-issuer";
import { findOrStartServices } from "@tjm/devstack/services";
import { adminSseScenario } from "./admin-sse/index.ts";
import { argon2Scenario } from "./argon2/index.ts";
import { authScenario } from "./auth/index.ts";
import { deliveryScenario } from "./delivery/index.ts";
import { dispatchScenario } from "./dispatch/index.ts";
import { heartbeatsScenario } from "./heartbeats/index.ts";
import { listScenario } from "./list/index.ts";
import { logoutAllScenario } from "./logout-all/index.ts";
import { metricsScenario } from "./metrics/index.ts";
import { overheadScenario } from "./overhead/index.ts";
import { portalScenario } from "./portal/index.ts";
import { relayScenario } from "./relay/index.ts";
import { table, targetsSection } from "./report.ts";
import { scaleOutScenario } from "./scale-out/index.ts";
import type { Attempt, BenchContext, Scenario } from "./scenario.ts";
import { readSettings, type ScenarioName, type Settings } from "./settings.ts";
import { Cleanup } from "./shared/cleanup.ts";
import { openAdminSql } from "./shared/database.ts";
import { REPOSITORY_ROOT } from "./shared/manager-process.ts";
import { sseScenario } from "./sse/index.ts";
import { submitScenario } from "./submit/index.ts";
import type { BenchRuntime } from "./submit/settings.ts";
import { tinyJobsScenario } from "./tiny-jobs/index.ts";
import { uploadScenario } from "./upload/index.ts";

const SCENARIO_RUNS: Record<ScenarioName, Scenario<unknown>> = {
  submit: submitScenario,
  list: listScenario,
  relay: relayScenario,
  heartbeats: heartbeatsScenario,
  sse: sseScenario,
  overhead: overheadScenario,
  dispatch: dispatchScenario,
  "tiny-jobs": tinyJobsScenario,
  upload: uploadScenario,
  argon2: argon2Scenario,
  auth: authScenario,
  "admin-sse": adminSseScenario,
  metrics: metricsScenario,
  "scale-out": scaleOutScenario,
  delivery: deliveryScenario,
  portal: portalScenario,
  "logout-all": logoutAllScenario,
};

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

async function header(context: BenchContext, settings: Settings): Promise<string> {
  const [server] = await context.admin<{ serverVersion: string }[]>`
    select current_setting('server_version') as "serverVersion"`;
  const cpus = os.cpus();
  const submit = settings.submit;
  const submitRuns = (runtime: BenchRuntime) =>
    settings.scenarios.includes("submit") && submit.runtimes.includes(runtime);
  const rows = [
    ["date", new Date().toISOString()],
    [
      "machine",
      `${cpus.length} x ${cpus[0]?.model ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    ],
    ["Node", process.version],
    [
      "Node 20 (submit, node20)",
      submitRuns("node20")
        ? `${submit.node20Path} (${execFileSync(submit.node20Path as string, ["--version"], { encoding: "utf8" }).trim()})`
        : "not run",
    ],
    ["scenarios", settings.scenarios.join(", ")],
    ["Deno", submitRuns("deno") ? denoVersion() : "not run"],
    ["PostgreSQL", server?.serverVersion ?? "unknown"],
    ["Manager DATABASE_POOL_MAX (pg-boss uses the same)", String(submit.managerPoolMax)],
    [
      "per level",
      `${settings.warmupSeconds} s warm-up + ${submit.seconds} s measured; list: ${settings.warmupSeconds} s + ${settings.list.seconds} s per filter`,
    ],
    ["load generator", "closed loop in this process (node:http keep-alive), on the same cores"],
    // Anything else running on the machine shows up here and in every number below.
    ["load average at start (1/5/15 min)", loadAverage()],
  ];
  return `# TJM bench\n\n${table(["", ""], rows)}`;
}

async function main(): Promise<void> {
  const settings = readSettings(process.env);
  const cleanup = new Cleanup();
  cleanup.runOnSignals(log);
  const started = performance.now();
  const failures: string[] = [];
  // A failed scenario (or measurement) is reported and the others still run.
  const attempt: Attempt = async (name, work) => {
    try {
      return await work();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`${name} failed: ${message}`);
      failures.push(`${name}: ${message}`);
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
      operatorIssuerUrl: issuer.issuer,
      token: await issuer.token({ expiresInSeconds: TOKEN_LIFETIME_S }),
      runId: randomBytes(4).toString("hex"),
      admin,
      cleanup,
      log,
    };
    print(await header(context, settings));

    const targets: string[][] = [];
    for (const name of settings.scenarios) {
      const scenario = SCENARIO_RUNS[name];
      const result = await attempt(name, () => scenario.run(context, attempt));
      print(scenario.report(result, settings));
      targets.push(...scenario.targets(result, settings));
    }
    print(targetsSection(targets));
  } catch (err) {
    failures.push(err instanceof Error ? err.message : String(err));
  } finally {
    await cleanup.run(log);
  }
  if (failures.length > 0) {
    print(`## Failures\n\n${failures.map((failure) => `- ${failure}`).join("\n")}`);
    process.exitCode = 1;
  }
  print(
    `Finished in ${((performance.now() - started) / 1000).toFixed(0)} s; load average at end: ${loadAverage()}`,
  );
}

await main();
