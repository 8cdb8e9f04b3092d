/**
 * The Admin console's SSE relay and its jobs view: N console sessions of one operator follow
 * `/api/events` through one Admin process (`npm run admin`) while one follower reads the
 * Manager's own stream; per event and session, the delay the Admin adds (its arrival minus the
 * Manager stream's, same event id, one clock), and the Admin's memory per session. Then the
 * jobs view with `storedJobs` jobs stored, loaded in Chromium: time to its first rendered row.
 *
 * The sessions are written through the console's own Sessions API (admin/src/sessions) with
 * one access token the Manager's provider issued to the console's client for the operator.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { BrowserSession, signIn } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { freePort } from "@tjm/devstack/services";
import { silentLogger } from "@tjm/platform";
import { chromium } from "playwright-core";
import { createSql } from "../../admin/src/platform/db.ts";
import { loadMigrations, migrate } from "../../admin/src/platform/migrations.ts";
import { sessionCookieFor } from "../../admin/src/sessions/cookie.ts";
import { createSealer } from "../../admin/src/sessions/sealing.ts";
import { Sessions } from "../../admin/src/sessions/sessions.ts";
import { RelyingParty, resourceIndicator } from "../../admin/src/sign-in/relying-party.ts";
import { startAdminConsole } from "../../scripts/demo-admin.ts";
import type { Attempt, BenchContext } from "../scenario.ts";
import { JOBS_PATH } from "../shared/api.ts";
import { HttpClient } from "../shared/load.ts";
import {
  createAccount,
  createClient,
  createProject,
  freshManagerSchema,
  startManager,
  withProvider,
} from "../shared/manager-process.ts";
import { findProcessTree, rssBytes } from "../shared/proc.ts";
import { type Spread, spread } from "../shared/stats.ts";
import { type FloorResult, measureFloor } from "./floor.ts";
import {
  closeFollowers,
  compareArrivals,
  type DelayRound,
  type Follower,
  openFollowers,
} from "./followers.ts";

export type { DelayRound } from "./followers.ts";

/** Debian's chromium, as the console's browser tests use it. */
const CHROMIUM = "/usr/bin/chromium";
const OPERATOR_EMAIL = "bench-operator@example.com";
const DELIVERY_TIMEOUT_MS = 30_000;
/** Time for the Admin to settle (garbage collected, sockets released) before its RSS is read. */
const SETTLE_MS = 2000;
const WARM_UP_SESSIONS = 20;
const SEED_CONCURRENCY = 16;
const ADMIN_EVENTS_PATH = "/api/events";
const MANAGER_EVENTS_PATH = "/api/v1/operations/events";

export interface RelayResult {
  sessions: number;
  connected: number;
  firstError: string | undefined;
  connectSeconds: number;
  rssBaselineBytes: number;
  rssConnectedBytes: number;
  rssAfterEventsBytes: number;
  bytesPerSession: number;
  /** Every session read by the bench. */
  everyReader: DelayRound;
  /** Every session written to, a spread sample of them read. */
  sampledReaders: DelayRound;
  /** Relay streams the Admin ended while measured. */
  lost: number;
}

export interface PageLoadResult {
  storedJobs: number;
  /** From navigation start to the first job row in the table (the page's own clock), per load. */
  firstRow: Spread;
  /** The same, measured from the bench's call to the row being seen. */
  wall: Spread;
}

export interface AdminSseResult {
  relay: RelayResult | undefined;
  /** The same fan-out from a bare node:http process: what no relay code can remove. */
  floor: FloorResult | undefined;
  pageLoad: PageLoadResult | undefined;
}

interface Setup {
  schema: string;
  managerUrl: string;
  adminUrl: string;
  adminPid: number;
  projectId: string;
  cookieName: string;
  /** One console session id per session setting. */
  sessionIds: string[];
  /** The provider's token the sessions hold, for the Manager's own stream. */
  accessToken: string;
}

async function prepare(context: BenchContext): Promise<Setup> {
  const settings = context.settings.adminSse;
  const { schema, env: withoutProvider } = await freshManagerSchema(context, "admin_sse");
  const managerPort = await freePort();
  const env = withProvider(withoutProvider, managerPort);
  const adminUrl = `http://127.0.0.1:${await freePort()}`;
  const password = randomBytes(18).toString("base64url");
  const [{ projectId }, , client] = await Promise.all([
    createProject(env, "bench", "admin-sse"),
    createAccount(env, { email: OPERATOR_EMAIL, password, roles: ["operator"] }),
    createClient(env, [
      ...["--name", "bench admin console", "--first-party", "--redirect-uri", `${adminUrl}/auth/callback`],
      ...["--resource", OPERATIONS_AUDIENCE, "--grant", "authorization_code", "--grant", "refresh_token"],
    ]),
  ]);
  if (client.clientSecret === undefined) throw new Error("clients create printed no secret for the console");
  const manager = await startManager("node", env, context.cleanup, {}, { port: managerPort });

  const sql = createSql({ url: context.databaseUrl, schema, poolMax: 4 });
  context.cleanup.defer("close the admin-sse bench's database client", () => sql.end({ timeout: 2 }));
  await migrate(sql, schema, await loadMigrations());
  const sessionKey = randomBytes(32).toString("hex");
  const consoleSettings = {
    DATABASE_URL: context.databaseUrl,
    DATABASE_SCHEMA: schema,
    MANAGER_URL: manager.baseUrl,
    OIDC_ISSUER_URL: env.OIDC_ISSUER_URL,
    OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
    ADMIN_CLIENT_ID: client.clientId,
    ADMIN_CLIENT_SECRET: client.clientSecret,
    ADMIN_SESSION_KEY: sessionKey,
  };
  const admin = await startAdminConsole(adminUrl, consoleSettings);
  context.cleanup.defer("stop the Admin console", admin.stop);
  const adminPid = consoleProcess(adminUrl);

  const relyingParty = new RelyingParty({
    issuer: env.OIDC_ISSUER_URL,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    audience: OPERATIONS_AUDIENCE,
  });
  const tokens = await signIn({
    issuer: env.OIDC_ISSUER_URL,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    redirectUri: `${adminUrl}/auth/callback`,
    resource: resourceIndicator(OPERATIONS_AUDIENCE),
    scope: "openid offline_access",
    email: OPERATOR_EMAIL,
    password,
    session: new BrowserSession(),
  });
  const sessions = new Sessions({
    sql,
    sealer: createSealer(sessionKey),
    relyingParty,
    idleMinutes: 30,
    absoluteHours: 12,
    logger: silentLogger,
  });
  const signedIn = {
    sub: tokens.claims.sub as string,
    sid: typeof tokens.claims.sid === "string" ? tokens.claims.sid : undefined,
    tokens: {
      access: {
        operations: { token: tokens.accessToken, expiresAt: Date.now() + (tokens.expiresIn ?? 600) * 1000 },
      },
      refreshToken: tokens.refreshToken,
      idToken: tokens.idToken,
    },
  };
  const sessionIds: string[] = [];
  for (let index = 0; index < settings.sessions + WARM_UP_SESSIONS; index++)
    sessionIds.push(await sessions.create(signedIn));
  context.log(
    `admin-sse: Manager ${manager.baseUrl}, Admin ${adminUrl} (pid ${adminPid}), ${sessionIds.length} sessions`,
  );
  return {
    schema,
    managerUrl: manager.baseUrl,
    adminUrl,
    adminPid,
    projectId,
    cookieName: sessionCookieFor(adminUrl).name,
    sessionIds,
    accessToken: tokens.accessToken,
  };
}

/** The node process running the console's code: of those started for it (npm, sh), the largest. */
function consoleProcess(adminUrl: string): number {
  const candidates = findProcessTree("ADMIN_PUBLIC_URL", adminUrl).pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "latin1").includes("admin/src/main.ts");
    } catch {
      return false;
    }
  });
  const [largest] = candidates.sort((a, b) => rssBytes(b) - rssBytes(a));
  if (largest === undefined) throw new Error("found no process running admin/src/main.ts");
  return largest;
}

const cookieHeaders = (setup: Setup, ids: string[]) =>
  ids.map((id) => `Cookie: ${setup.cookieName}=${id}\r\n`);

async function measureRelay(context: BenchContext, setup: Setup): Promise<RelayResult> {
  const settings = context.settings.adminSse;
  const [warmUpIds, ids] = [
    setup.sessionIds.slice(0, WARM_UP_SESSIONS),
    setup.sessionIds.slice(WARM_UP_SESSIONS),
  ];
  // Warm-up: the first relays compile code and open the pool's connections; not per session.
  closeFollowers(await openFollowers(setup.adminUrl, ADMIN_EVENTS_PATH, cookieHeaders(setup, warmUpIds)));
  await sleep(SETTLE_MS);
  const rssBaselineBytes = rssBytes(setup.adminPid);

  const [reference] = await openFollowers(setup.managerUrl, MANAGER_EVENTS_PATH, [
    `Authorization: Bearer ${setup.accessToken}\r\n`,
  ]);
  const started = performance.now();
  const followers = await openFollowers(setup.adminUrl, ADMIN_EVENTS_PATH, cookieHeaders(setup, ids));
  const connectSeconds = (performance.now() - started) / 1000;
  context.cleanup.defer("close the admin-sse followers", async () =>
    closeFollowers([...followers, ...(reference ? [reference] : [])]),
  );
  const connected = followers.filter((follower) => follower.connected);
  await sleep(1000);
  const rssConnectedBytes = rssBytes(setup.adminPid);
  context.log(
    `admin-sse: ${connected.length} of ${ids.length} sessions following in ${connectSeconds.toFixed(1)} s`,
  );

  // Every session read by this process: each event's last reader waits for the 999 before it
  // in this one thread, so this round shows the bench's own reading as much as the Admin.
  const everyReader = await measureRound(context, setup, reference, connected);
  // Then every session still written to, a spread sample read: the Admin's cost, the bench's
  // reading no longer queued behind a thousand sockets (the others' bytes wait in the kernel).
  const step = Math.max(1, Math.floor(connected.length / settings.sampledReaders));
  const sampled = connected.filter((_, index) => index % step === 0);
  for (const follower of connected) if (!sampled.includes(follower)) follower.socket.pause();
  const sampledReaders = await measureRound(context, setup, reference, sampled);
  const rssAfterEventsBytes = rssBytes(setup.adminPid);
  const lost = connected.filter((follower) => follower.lost).length;
  closeFollowers([...followers, ...(reference ? [reference] : [])]);
  return {
    sessions: ids.length,
    connected: connected.length,
    firstError: followers.find((follower) => follower.error)?.error ?? reference?.error,
    connectSeconds,
    rssBaselineBytes,
    rssConnectedBytes,
    rssAfterEventsBytes,
    bytesPerSession:
      connected.length > 0 ? (rssConnectedBytes - rssBaselineBytes) / connected.length : Number.NaN,
    everyReader,
    sampledReaders,
    lost,
  };
}

/** Submits `events` jobs and compares the readers' arrivals of their events with the reference's. */
async function measureRound(
  context: BenchContext,
  setup: Setup,
  reference: Follower | undefined,
  readers: Follower[],
): Promise<DelayRound> {
  const settings = context.settings.adminSse;
  const before = new Set(reference?.arrivals.keys() ?? []);
  const client = new HttpClient(setup.managerUrl, context.token, 1);
  const body = Buffer.from(JSON.stringify(sampleSubmission(setup.projectId)));
  const submitStarted = performance.now();
  for (let job = 0; job < settings.events; job++) {
    const due = submitStarted + (job * 1000) / settings.eventsPerSecond;
    if (due > performance.now()) await sleep(due - performance.now());
    await client.expect(201, "POST", JOBS_PATH, body);
  }
  client.close();
  const expected = () => [...(reference?.arrivals ?? [])].filter(([id]) => !before.has(id));
  const delivered = (follower: Follower) => expected().every(([id]) => follower.arrivals.has(id));
  const deadline = performance.now() + DELIVERY_TIMEOUT_MS;
  while (performance.now() < deadline && !(expected().length >= settings.events && readers.every(delivered)))
    await sleep(100);
  return compareArrivals(readers, expected());
}

/** Submits jobs until `total` are stored, SEED_CONCURRENCY at a time, through the real route. */
async function storeJobs(context: BenchContext, setup: Setup, total: number): Promise<void> {
  const sql = createSql({ url: context.databaseUrl, schema: setup.schema, poolMax: 1 });
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from jobs`;
  await sql.end({ timeout: 2 });
  let remaining = total - (row?.n ?? 0);
  const client = new HttpClient(setup.managerUrl, context.token, SEED_CONCURRENCY);
  const body = Buffer.from(JSON.stringify(sampleSubmission(setup.projectId)));
  await Promise.all(
    Array.from({ length: SEED_CONCURRENCY }, async () => {
      while (remaining > 0) {
        remaining--;
        await client.expect(201, "POST", JOBS_PATH, body);
      }
    }),
  );
  client.close();
}

async function measurePageLoad(context: BenchContext, setup: Setup): Promise<PageLoadResult> {
  const settings = context.settings.adminSse;
  await storeJobs(context, setup, settings.storedJobs);
  context.log(`admin-sse: ${settings.storedJobs} jobs stored; loading the jobs view`);
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  context.cleanup.defer("close Chromium", () => browser.close());
  const firstRow: number[] = [];
  const wall: number[] = [];
  try {
    for (let load = 0; load <= settings.pageLoads; load++) {
      // The session cookie as a header on every request of the page: Chromium refuses to have a
      // Secure `__Host-` cookie set for a plain-http origin through the protocol.
      const page = await browser.newPage({
        extraHTTPHeaders: { cookie: `${setup.cookieName}=${setup.sessionIds[0] as string}` },
      });
      const started = performance.now();
      await page.goto(`${setup.adminUrl}/jobs`, { waitUntil: "commit" });
      const rowAt = await page.waitForFunction(
        () => document.querySelector("#jobs-table tbody tr[data-job-id]") !== null && performance.now(),
        undefined,
        { polling: "raf", timeout: 30_000 },
      );
      const ended = performance.now();
      // The first load pays for Chromium's start-up and the Admin's first rendering: not counted.
      if (load > 0) {
        firstRow.push((await rowAt.jsonValue()) as number);
        wall.push(ended - started);
      }
      await page.close();
    }
  } finally {
    await browser.close();
  }
  return { storedJobs: settings.storedJobs, firstRow: spread(firstRow), wall: spread(wall) };
}

export async function benchAdminSse(context: BenchContext, attempt: Attempt): Promise<AdminSseResult> {
  const setup = await prepare(context);
  const relay = await attempt("admin-sse relay", () => measureRelay(context, setup));
  const floor = await attempt("admin-sse floor", () =>
    measureFloor(context, context.settings.adminSse.sessions),
  );
  const pageLoad = await attempt("admin-sse page load", () => measurePageLoad(context, setup));
  return { relay, floor, pageLoad };
}
