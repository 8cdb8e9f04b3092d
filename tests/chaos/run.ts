/**
 * `npm run chaos [-- --ci] [-- <file filter>…]`: runs the fault scenarios (vitest.chaos.config.ts,
 * side by side), then prints one row per scenario: runs, the checker's verdicts over every job,
 * destinations rewritten from the same staged object (not bad; checker.ts says why), recovery
 * times and how long it took. Exits 1 when a scenario failed or any job was judged
 * other than ok. `--ci` runs the CI subset (fewer runs per scenario, no 500-job scale-out).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BAD_VERDICTS, VERDICTS } from "./checker.ts";
import type { ScenarioResult } from "./scenario.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const args = process.argv.slice(2);
const profile = args.includes("--ci") ? "ci" : (process.env.CHAOS_PROFILE ?? "full");
const filters = args.filter((arg) => arg !== "--ci");
const resultsDir = await mkdtemp(join(tmpdir(), "tjm-chaos-"));
const started = Date.now();

const exitCode = await new Promise<number>((resolve) => {
  const child = spawn(
    join(repoRoot, "node_modules/.bin/vitest"),
    ["run", "--config", "vitest.chaos.config.ts", ...filters],
    {
      cwd: repoRoot,
      stdio: "inherit",
      env: {
        ...process.env,
        CHAOS_PROFILE: profile,
        CHAOS_RESULTS_DIR: resultsDir,
        CLUSTER_JOBS: process.env.CLUSTER_JOBS ?? "500",
      },
    },
  );
  child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
});

const results: ScenarioResult[] = [];
for (const name of (await readdir(resultsDir)).sort()) {
  results.push(JSON.parse(await readFile(join(resultsDir, name), "utf8")) as ScenarioResult);
}
await rm(resultsDir, { recursive: true, force: true });

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
function summary(samples: number[]): string {
  if (samples.length === 0) return "—";
  const sorted = [...samples].sort((x, y) => x - y);
  const median = sorted[Math.floor((sorted.length - 1) / 2)] as number;
  return `p50 ${seconds(median)}, max ${seconds(sorted[sorted.length - 1] as number)} (${sorted.length})`;
}

const header = ["scenario", "runs", "jobs", ...VERDICTS, "rewrites", "recovery", "took"];
const rows = results.map((result) => [
  result.scenario,
  String(result.runs),
  String(Object.values(result.jobs).reduce((sum, count) => sum + count, 0)),
  ...VERDICTS.map((verdict) => String(result.jobs[verdict])),
  String(result.rewrites),
  result.recoveries.map((recovery) => `${recovery.what}: ${summary(recovery.samplesMs)}`).join("; ") || "—",
  seconds(result.durationMs),
]);
console.log(`\nFault suite (${profile} profile), ${seconds(Date.now() - started)} in all\n`);
console.log(`| ${header.join(" | ")} |`);
console.log(`|${header.map(() => "---").join("|")}|`);
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
for (const result of results) {
  for (const note of result.notes) console.log(`- ${result.scenario}: ${note}`);
}

const bad = results.filter((result) => BAD_VERDICTS.some((verdict) => result.jobs[verdict] > 0));
if (exitCode !== 0) console.error("\nA scenario failed (vitest's output above says which and why).");
if (bad.length > 0) console.error(`\nJobs judged bad in: ${bad.map((result) => result.scenario).join(", ")}`);
process.exit(exitCode !== 0 || bad.length > 0 ? 1 : 0);
