/**
 * The built-in provider's costs: the authorization-code flow as a browser goes through it (round
 * trips and wall time per sign-in, and where the time goes), client_credentials tokens per
 * second, and what the per-request standing check of TJM's tokens costs the submit path: the
 * same load on one Manager with the provider's tokens and with the TestIssuer's, which the
 * Manager trusts as an external operator issuer and checks no standing for.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { BrowserSession, signIn } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE, TENANT_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { freePort } from "@tjm/devstack/services";
import { resourceIndicator } from "../../manager/src/identity/resources.ts";
import type { Attempt, BenchContext } from "../scenario.ts";
import { loadOptions } from "../settings.ts";
import { JOBS_PATH } from "../shared/api.ts";
import { checkpoint } from "../shared/database.ts";
import { closedLoop, HttpClient, type LoadResult } from "../shared/load.ts";
import {
  createAccount,
  createClient,
  createProject,
  freshManagerSchema,
  startManager,
  withProvider,
} from "../shared/manager-process.ts";
import { median } from "../shared/stats.ts";

const OPERATOR_EMAIL = "operator@bench.tjm.local";
/** Never fetched: the headless sign-in stops at the redirect back to the client. */
const REDIRECT_URI = "http://127.0.0.1:9/callback";
const OPERATIONS_RESOURCE = resourceIndicator(OPERATIONS_AUDIENCE);
const TENANT_RESOURCE = resourceIndicator(TENANT_AUDIENCE);
/** What an operator console's sign-in asks for: a refresh token too. */
const SIGN_IN_SCOPE = "openid offline_access";

export interface SignInStep {
  /** Method and path, with the ids that differ per sign-in as :id. */
  request: string;
  /** From the request's start to the next one's (the last: to the tokens in hand). */
  medianMs: number;
}

export interface SignInTimes {
  /** Per sign-in: HTTP requests made (discovery and the token request included), and wall ms. */
  roundTrips: number[];
  wallMs: number[];
  steps: SignInStep[];
  /** Sign-ins that made exactly the requests of `steps`; only they are in its medians. */
  sameSequence: number;
}

export interface StandingLevel {
  concurrency: number;
  /** Tokens of the built-in provider: the standing check runs (one query per request). */
  provider: LoadResult | undefined;
  /** Tokens of the external operator issuer (the TestIssuer): no standing check. */
  external: LoadResult | undefined;
}

export interface AuthResult {
  signIns: SignInTimes | undefined;
  tokens: LoadResult[] | undefined;
  standing: StandingLevel[] | undefined;
}

interface AuthSetup {
  issuer: string;
  baseUrl: string;
  projectId: string;
  password: string;
  operationsClientId: string;
  tenantClient: { clientId: string; clientSecret: string };
}

/**
 * One Node Manager serving its provider on a fresh schema, with a project, an operator account,
 * a first-party public operations client and a tenant client_credentials client, all made by
 * the Manager's CLI.
 */
async function prepare(context: BenchContext): Promise<AuthSetup & { stop(): Promise<void> }> {
  const { schema, env: withoutProvider } = await freshManagerSchema(context, "auth");
  // The client_credentials issuance is measured with this many other clients stored (each with
  // a grant), so the provider's client lookup is timed against a populated oauth_clients.
  const { storedClients } = context.settings.auth;
  await context.admin.unsafe(`
    with made as (
      insert into "${schema}".oauth_clients (client_id, client_secret_hmac, name, grant_types, response_types)
      select gen_random_uuid()::text, md5(random()::text), 'stored ' || n,
        '{client_credentials}', '{}'
      from generate_series(1, ${storedClients}) as n
      returning id)
    insert into "${schema}".oauth_client_resources (client_id, resource)
    select id, '${TENANT_AUDIENCE}' from made`);
  const port = await freePort();
  const env = withProvider(withoutProvider, port);
  const { projectId } = await createProject(env, "bench", "auth");
  const password = randomBytes(18).toString("base64url");
  const [, operations, tenant] = await Promise.all([
    createAccount(env, { email: OPERATOR_EMAIL, password, roles: ["operator"] }),
    createClient(env, [
      ...["--name", "bench operations", "--first-party", "--public", "--redirect-uri", REDIRECT_URI],
      ...["--resource", OPERATIONS_AUDIENCE, "--grant", "authorization_code", "--grant", "refresh_token"],
    ]),
    createClient(env, [
      ...["--name", "bench tenant", "--grant", "client_credentials"],
      ...["--resource", TENANT_AUDIENCE, "--project", projectId],
    ]),
  ]);
  if (tenant.clientSecret === undefined)
    throw new Error("clients create printed no secret for the tenant client");
  const manager = await startManager("node", env, context.cleanup, {}, { port });
  return {
    issuer: env.OIDC_ISSUER_URL,
    baseUrl: manager.baseUrl,
    projectId,
    password,
    operationsClientId: operations.clientId,
    tenantClient: { clientId: tenant.clientId, clientSecret: tenant.clientSecret },
    stop: manager.stop,
  };
}

/** Interaction uids and the like differ per sign-in: 16+ id characters with a digit or capital are one. */
function describeRequest(method: string, url: string): string {
  return `${method} ${new URL(url).pathname.replace(/\/(?=[A-Za-z0-9_-]*[A-Z0-9])[A-Za-z0-9_-]{16,}/g, "/:id")}`;
}

interface TimedSignIn {
  wallMs: number;
  /** Each request made, with how long until the next began (the last: until the tokens). */
  requests: { request: string; ms: number }[];
  accessToken: string;
}

/** The whole flow in a fresh browser session (no provider cookie: the sign-in form every time). */
async function timedSignIn(setup: AuthSetup): Promise<TimedSignIn> {
  const starts: { request: string; at: number }[] = [];
  const started = performance.now();
  const tokens = await signIn({
    issuer: setup.issuer,
    clientId: setup.operationsClientId,
    redirectUri: REDIRECT_URI,
    resource: OPERATIONS_RESOURCE,
    scope: SIGN_IN_SCOPE,
    email: OPERATOR_EMAIL,
    password: setup.password,
    session: new BrowserSession(),
    onRequest: (method, url) => starts.push({ request: describeRequest(method, url), at: performance.now() }),
  });
  const ended = performance.now();
  const requests = starts.map(({ request, at }, index) => ({
    request,
    ms: (starts[index + 1]?.at ?? ended) - at,
  }));
  return { wallMs: ended - started, requests, accessToken: tokens.accessToken };
}

async function measureSignIns(context: BenchContext, setup: AuthSetup): Promise<SignInTimes> {
  // One unmeasured: the first pays for JIT, connection set-up and the provider's caches.
  await timedSignIn(setup);
  const samples: TimedSignIn[] = [];
  for (let index = 0; index < context.settings.auth.signIns; index++) samples.push(await timedSignIn(setup));
  const sequence = (sample: TimedSignIn) => sample.requests.map((step) => step.request).join("\n");
  const first = samples[0];
  const alike = samples.filter((sample) => first !== undefined && sequence(sample) === sequence(first));
  const steps = (first?.requests ?? []).map(({ request }, index) => ({
    request,
    medianMs: median(alike.map((sample) => sample.requests[index]?.ms ?? Number.NaN)),
  }));
  const wallMs = samples.map((sample) => sample.wallMs);
  context.log(`auth: ${samples.length} sign-ins, median ${median(wallMs).toFixed(0)} ms`);
  return {
    roundTrips: samples.map((sample) => sample.requests.length),
    wallMs,
    steps,
    sameSequence: alike.length,
  };
}

/** POST <token endpoint> grant_type=client_credentials, the client's secret in Basic auth. */
async function measureTokens(context: BenchContext, setup: AuthSetup): Promise<LoadResult[]> {
  const discoveryUrl = `${setup.issuer}/.well-known/openid-configuration`;
  const discovery = (await (await fetch(discoveryUrl)).json()) as { token_endpoint: string };
  const endpoint = new URL(discovery.token_endpoint);
  const { clientId, clientSecret } = setup.tenantClient;
  // RFC 6749 §2.3.1: each half form-encoded before the Basic encoding.
  const credentials = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`;
  const headers = {
    authorization: `Basic ${Buffer.from(credentials).toString("base64")}`,
    "content-type": "application/x-www-form-urlencoded",
  };
  const body = Buffer.from(
    new URLSearchParams({ grant_type: "client_credentials", resource: TENANT_RESOURCE }).toString(),
  );
  const results: LoadResult[] = [];
  for (const concurrency of context.settings.auth.tokenConcurrency) {
    const client = new HttpClient(endpoint.origin, undefined, concurrency);
    try {
      await checkpoint(context.admin, context.log);
      const options = loadOptions(context.settings, concurrency, context.settings.auth.tokenSeconds);
      const result = await closedLoop(
        () => client.expect(200, "POST", endpoint.pathname, body, headers),
        options,
      );
      context.log(`auth: client_credentials x${concurrency}: ${result.perSecond.toFixed(0)}/s`);
      results.push(result);
    } finally {
      client.close();
    }
  }
  return results;
}

/**
 * The submit bench's load (BENCH_CONCURRENCY, BENCH_SECONDS) on one Manager, with each kind of
 * token in turn. Who goes first alternates per level, so the jobs table growing and background
 * drift do not favour one.
 */
async function measureStanding(
  context: BenchContext,
  setup: AuthSetup,
  attempt: Attempt,
): Promise<StandingLevel[]> {
  const body = Buffer.from(JSON.stringify(sampleSubmission(setup.projectId)));
  const tokens: Record<"provider" | "external", () => Promise<string>> = {
    // A fresh sign-in per level: the provider's access tokens last at most 10 minutes.
    provider: async () => (await timedSignIn(setup)).accessToken,
    external: async () => context.token,
  };
  const levels: StandingLevel[] = [];
  for (const [index, concurrency] of context.settings.submit.concurrency.entries()) {
    const level: StandingLevel = { concurrency, provider: undefined, external: undefined };
    const order = index % 2 === 0 ? (["provider", "external"] as const) : (["external", "provider"] as const);
    for (const key of order) {
      level[key] = await attempt(`auth submit with ${key} tokens x${concurrency}`, async () => {
        const client = new HttpClient(setup.baseUrl, await tokens[key](), concurrency);
        try {
          await checkpoint(context.admin, context.log);
          const options = loadOptions(context.settings, concurrency, context.settings.submit.seconds);
          return await closedLoop(() => client.expect(201, "POST", JOBS_PATH, body), options);
        } finally {
          client.close();
        }
      });
      context.log(
        `auth: submit with ${key} tokens x${concurrency}: ${level[key]?.perSecond.toFixed(0) ?? "n/a"} jobs/s`,
      );
    }
    levels.push(level);
  }
  return levels;
}

export async function benchAuth(context: BenchContext, attempt: Attempt): Promise<AuthResult> {
  const setup = await prepare(context);
  const signIns = await attempt("auth sign-ins", () => measureSignIns(context, setup));
  const tokens = await attempt("auth client_credentials", () => measureTokens(context, setup));
  const standing = await attempt("auth standing check", () => measureStanding(context, setup, attempt));
  await setup.stop();
  return { signIns, tokens, standing };
}
