/** The list scenario's tables: latency per filter and size, the query plans; and its target. */
import { count, met, ms, table } from "../report.ts";
import { type ListSizeResult, PAGE } from "./run.ts";

const TARGETS = { listP99MsAtOneMillion: 20 };

export function listReport(result: ListSizeResult[] | undefined): string {
  const sizes = result ?? [];
  const latency = table(
    ["jobs stored", "filter", "matching", "p50 ms", "p99 ms", "requests", "errors"],
    sizes.flatMap((size) =>
      size.measurements.map((m) => [
        count(size.jobs),
        m.label,
        count(m.matching),
        ms(m.result.p50Ms),
        ms(m.result.p99Ms),
        count(m.result.succeeded),
        count(m.result.failed),
      ]),
    ),
  );
  const plans = table(
    ["jobs stored", "filter", "indexes used", "execution ms (EXPLAIN ANALYZE)"],
    sizes.flatMap((size) =>
      size.plans.map((plan) => [
        count(size.jobs),
        plan.label,
        plan.indexes.join(", ") || "none (sequential scan)",
        ms(plan.executionMs),
      ]),
    ),
  );
  const fills = sizes.map((size) => `${count(size.jobs)} jobs: ${size.fillSeconds.toFixed(1)} s`).join("; ");
  const largest = sizes.at(-1);
  const explained = largest
    ? `\n\nEXPLAIN (ANALYZE, BUFFERS) of the page query for ${largest.explained.label} at ${count(largest.jobs)} jobs:\n\n\`\`\`text\n${largest.explained.plan}\n\`\`\``
    : "";
  return `## List: GET /api/v1/operations/jobs, limit ${PAGE.limit}, offset ${PAGE.offset}, one client\n\n${latency}\n\nFill (SQL, count compaction, VACUUM ANALYZE): ${fills}\n\n### Query plans of listJobs\n\n${plans}${explained}`;
}

export function listTargets(result: ListSizeResult[] | undefined): string[][] {
  const million = result?.find((size) => size.jobs === 1_000_000);
  const worst = million?.measurements.reduce<{ label: string; p99: number } | undefined>(
    (max, m) => (max && max.p99 >= m.result.p99Ms ? max : { label: m.label, p99: m.result.p99Ms }),
    undefined,
  );
  return [
    [
      `list p99 < ${TARGETS.listP99MsAtOneMillion} ms at 1M jobs (worst filter)`,
      worst ? `${ms(worst.p99)} ms (${worst.label})` : "n/a",
      met(worst ? worst.p99 < TARGETS.listP99MsAtOneMillion : undefined),
    ],
  ];
}
