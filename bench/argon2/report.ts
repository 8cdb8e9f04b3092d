/** The argon2 scenario's tables and target. */
import type { Argon2Parameters } from "../../manager/src/identity/password-hashing.ts";
import { met, mib, ms, table } from "../report.ts";
import { type Argon2Result, sameParameters } from "./run.ts";

/** ms per hash of the chosen parameters: slow for a guesser, not felt at sign-in. */
const TARGET_MS = { min: 100, max: 250 };

const describeParameters = (parameters: Argon2Parameters) =>
  `m=${parameters.memoryCost / 1024} MiB, t=${parameters.timeCost}, p=${parameters.parallelism}`;

function chosenMs(result: Argon2Result): number {
  return result.grid.find((row) => sameParameters(row.parameters, result.chosen))?.medianMs ?? Number.NaN;
}

export function argon2Report(result: Argon2Result | undefined): string {
  if (!result) return "## argon2id password hashing\n\nnot measured";
  const grid = table(
    ["memory", "passes", "lanes", "ms per hash (median)", "max ms", "chosen"],
    result.grid.map((row) => [
      `${row.parameters.memoryCost / 1024} MiB`,
      String(row.parameters.timeCost),
      String(row.parameters.parallelism),
      ms(row.medianMs),
      ms(row.maxMs),
      sameParameters(row.parameters, result.chosen) ? "yes" : "",
    ]),
  );
  const concurrency = result.concurrency
    ? table(
        ["concurrent hashes", "ms per hash (median)", "hashes/s", "peak RSS growth"],
        result.concurrency.map((row) => [
          String(row.concurrency),
          ms(row.medianMs),
          row.hashesPerSecond.toFixed(1),
          mib(row.peakRssGrowthBytes),
        ]),
      )
    : "not measured";
  const signIn = table(
    ["sign-in path", "ms (median)"],
    [
      ["wrong password, known account", ms(result.wrongPasswordMs ?? Number.NaN)],
      ["unknown account (dummy verify)", ms(result.unknownAccountMs ?? Number.NaN)],
    ],
  );
  return [
    `## argon2id password hashing (one lane; chosen: ${describeParameters(result.chosen)})`,
    grid,
    `### Chosen parameters under concurrent hashing (libuv pool of ${process.env.UV_THREADPOOL_SIZE ?? 4})`,
    concurrency,
    "### Sign-in paths (chosen parameters)",
    signIn,
  ].join("\n\n");
}

export function argon2Targets(result: Argon2Result | undefined): string[][] {
  const measured = result ? chosenMs(result) : Number.NaN;
  return [
    [
      `argon2id at the chosen parameters ${TARGET_MS.min}-${TARGET_MS.max} ms per hash`,
      Number.isFinite(measured) ? `${ms(measured)} ms` : "n/a",
      met(Number.isFinite(measured) ? measured >= TARGET_MS.min && measured <= TARGET_MS.max : undefined),
    ],
  ];
}
