/** The auth scenario's tables: sign-ins, client_credentials tokens, the standing check's cost. */
import { PASSWORD_HASH_PARAMETERS } from "../../manager/src/identity/password-hashing.ts";
import { count, ms, ratio, table } from "../report.ts";
import type { Settings } from "../settings.ts";
import type { LoadResult } from "../shared/load.ts";
import { median, spread } from "../shared/stats.ts";
import type { AuthResult, SignInTimes, StandingLevel } from "./run.ts";

const { memoryCost, timeCost } = PASSWORD_HASH_PARAMETERS;
const ARGON2 = `argon2id at m=${memoryCost / 1024} MiB t=${timeCost}`;

function signInSection(times: SignInTimes | undefined, settings: Settings): string {
  const title = `## Auth: sign-in through the built-in provider (authorization code + PKCE, no browser, ${settings.auth.signIns} sign-ins)`;
  if (!times) return `${title}\n\nnot measured`;
  const trips = spread(times.roundTrips);
  const wall = spread(times.wallMs);
  const summary = table(
    ["sign-ins", "round trips (min / median / max)", "p50 ms", "p99 ms", "max ms"],
    [
      [
        String(wall.samples),
        `${Math.min(...times.roundTrips)} / ${median(times.roundTrips)} / ${trips.max}`,
        ms(wall.p50),
        ms(wall.p99),
        ms(wall.max),
      ],
    ],
  );
  const steps = table(
    ["#", "request", "median ms"],
    times.steps.map((step, index) => [String(index + 1), step.request, ms(step.medianMs)]),
  );
  return [
    title,
    `Each in a fresh browser session (the sign-in form every time), discovery included; the ${ARGON2} verification of the password is inside the wall time (the POST of the sign-in form).`,
    summary,
    `### Where a sign-in's time goes (median from each request's start to the next one's; ${times.sameSequence} of ${wall.samples} sign-ins made these requests)`,
    steps,
  ].join("\n\n");
}

const LOAD_HEADERS = ["concurrency", "per second", "p50 ms", "p99 ms", "ok", "errors"];

function loadRow(result: LoadResult): string[] {
  return [
    String(result.concurrency),
    count(result.perSecond),
    ms(result.p50Ms),
    ms(result.p99Ms),
    count(result.succeeded),
    count(result.failed),
  ];
}

function firstErrors(entries: [string, LoadResult | undefined][]): string {
  return entries
    .filter(([, result]) => result?.firstError)
    .map(([label, result]) => `\n\nFirst error, ${label} x${result?.concurrency}: ${result?.firstError}`)
    .join("");
}

function tokensSection(tokens: LoadResult[] | undefined, settings: Settings): string {
  const title = `## Auth: client_credentials tokens (POST /oidc/token, one tenant client among ${count(settings.auth.storedClients + 2)} stored, closed loop)`;
  if (!tokens) return `${title}\n\nnot measured`;
  const errors = firstErrors(tokens.map((result): [string, LoadResult] => ["token", result]));
  return `${title}\n\n${table(LOAD_HEADERS, tokens.map(loadRow))}${errors}`;
}

function standingSection(levels: StandingLevel[] | undefined): string {
  const title =
    "## Auth: the per-request standing check on submit (POST /api/v1/operations/jobs, one Manager)";
  if (!levels) return `${title}\n\nnot measured`;
  const rows = levels.map((level) => {
    const provider = level.provider;
    const external = level.external;
    const providerRate = provider?.perSecond ?? Number.NaN;
    const externalRate = external?.perSecond ?? Number.NaN;
    return [
      String(level.concurrency),
      count(providerRate),
      `${ms(provider?.p50Ms ?? Number.NaN)} / ${ms(provider?.p99Ms ?? Number.NaN)}`,
      count(externalRate),
      `${ms(external?.p50Ms ?? Number.NaN)} / ${ms(external?.p99Ms ?? Number.NaN)}`,
      ratio(providerRate / externalRate),
      count((provider?.failed ?? 0) + (external?.failed ?? 0)),
    ];
  });
  const errors = firstErrors(
    levels.flatMap((level): [string, LoadResult | undefined][] => [
      ["provider tokens", level.provider],
      ["external issuer tokens", level.external],
    ]),
  );
  return [
    title,
    "Provider tokens: the standing check runs (one query per request). External operator issuer (the TestIssuer): no standing check. Verified signatures are cached either way.",
    `${table(
      [
        "concurrency",
        "provider jobs/s",
        "provider p50 / p99 ms",
        "external jobs/s",
        "external p50 / p99 ms",
        "provider / external",
        "errors",
      ],
      rows,
    )}${errors}`,
  ].join("\n\n");
}

export function authReport(result: AuthResult | undefined, settings: Settings): string {
  return [
    signInSection(result?.signIns, settings),
    tokensSection(result?.tokens, settings),
    standingSection(result?.standing),
  ].join("\n\n");
}
