/**
 * Property-based fuzzing of the built-in provider: its endpoints (authorization, token, logout,
 * userinfo, revocation, discovery) and its interaction pages (GET and POSTs, with and without a
 * live interaction's cookies), each parameter a valid value, hostile text, a huge or control-
 * character string, or repeated (an array where a string is expected). Whatever arrives, the
 * answer is not a 5xx and comes within ANSWER_TIMEOUT_MS. The seed is printed; FUZZ_SEED
 * replays it, FUZZ_RUNS sets the runs per endpoint (as for tests/fuzz/routes.test.ts).
 */
import { randomBytes } from "node:crypto";
import { type BrowserSession, startAuthorization } from "@tjm/devstack/oidc-client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE } from "../../manager/src/identity/resources.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { TestManager } from "../harness/manager.ts";
import { hostileText } from "./hostile-values.ts";

/** Runs per endpoint: the whole file stays near 15 s on 2 busy cores. */
const RUNS_PER_ENDPOINT = Number(process.env.FUZZ_RUNS ?? 15);
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);
/** An answer slower than this is a hang, reported with its request. */
const ANSWER_TIMEOUT_MS = 5_000;
const ENDPOINT_TIMEOUT_MS = 60_000;

console.log(
  `provider fuzzing: seed ${SEED}, ${RUNS_PER_ENDPOINT} runs per endpoint; replay with FUZZ_SEED=${SEED} npx vitest run tests/fuzz/provider.test.ts (add -t '<endpoint>' for one)`,
);

let manager: TestManager;
let client: TestClient;
let account: TestAccount;

beforeAll(async () => {
  manager = await TestManager.start();
  client = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
  account = await createTestAccount(manager.sql);
});
afterAll(() => manager?.close());

/** Values that exist, so some requests get past the first check to the ones behind it. */
function knownValues(): Record<string, string[]> {
  return {
    client_id: [client.clientId],
    redirect_uri: [client.redirectUri],
    post_logout_redirect_uri: [client.redirectUri],
    response_type: ["code", "token", "id_token"],
    response_mode: ["query", "fragment", "form_post", "jwt"],
    scope: ["openid", "openid offline_access email profile"],
    code_challenge: ["E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"],
    code_challenge_method: ["S256", "plain"],
    resource: [resourceIndicator(ACCOUNT_PORTAL_AUDIENCE), "https://evil.example/"],
    prompt: ["login", "consent", "none", "create"],
    grant_type: [
      "authorization_code",
      "refresh_token",
      "client_credentials",
      "urn:ietf:params:oauth:grant-type:device_code",
    ],
    token_type_hint: ["access_token", "refresh_token"],
    email: [account.email, "nobody@example.com"],
    password: [account.password, "wrong password"],
    decision: ["allow", "deny"],
    logout: ["yes"],
    max_age: ["0", "-1", "1e400"],
  };
}

type Value = string | string[];

/** One parameter's value: known, hostile, huge, control characters, any text, or repeated. */
function parameterValue(name: string): fc.Arbitrary<Value> {
  const known = knownValues()[name] ?? [];
  const single = fc.oneof(
    ...(known.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...known) }] : []),
    { weight: 3, arbitrary: hostileText },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(255, 3_000, 40_000)
        .map((length) => randomBytes(length).toString("base64").slice(0, length)),
    },
    {
      weight: 1,
      arbitrary: fc.string({ unit: fc.constantFrom("\u0000", "\u0001", "\u007f", "\u0085", "\n", "a") }),
    },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  );
  return fc.oneof(
    { weight: 5, arbitrary: single },
    { weight: 1, arbitrary: fc.array(single, { minLength: 2, maxLength: 3 }) },
  );
}

function pairsOf(params: Record<string, Value | undefined>): [string, string][] {
  return Object.entries(params).flatMap(([name, value]) =>
    (value === undefined ? [] : Array.isArray(value) ? value : [value]).map((item): [string, string] => [
      name,
      item,
    ]),
  );
}

interface Endpoint {
  name: string;
  method: "GET" | "POST";
  /** Below the issuer; `{uid}` becomes a live interaction's uid or hostile text. */
  path: string;
  params: string[];
  /** An interaction page: sent with a live interaction's cookies (or without). */
  interaction?: boolean;
  /** A share of the runs: each of this endpoint's requests may cost a password hash (~0.3 s). */
  runShare?: number;
}

const AUTHORIZATION_PARAMS = [
  "client_id",
  "response_type",
  "redirect_uri",
  "scope",
  "state",
  "nonce",
  "code_challenge",
  "code_challenge_method",
  "resource",
  "prompt",
  "max_age",
  "login_hint",
  "ui_locales",
  "claims",
  "request",
  "request_uri",
  "response_mode",
  "id_token_hint",
];

const ENDPOINTS: Endpoint[] = [
  { name: "GET /auth", method: "GET", path: "/auth", params: AUTHORIZATION_PARAMS },
  { name: "POST /auth", method: "POST", path: "/auth", params: AUTHORIZATION_PARAMS },
  {
    name: "POST /token",
    method: "POST",
    path: "/token",
    params: [
      "grant_type",
      "client_id",
      "client_secret",
      "code",
      "code_verifier",
      "redirect_uri",
      "refresh_token",
      "resource",
      "scope",
    ],
  },
  {
    name: "GET /session/end",
    method: "GET",
    path: "/session/end",
    params: ["client_id", "id_token_hint", "post_logout_redirect_uri", "state", "logout_hint", "ui_locales"],
  },
  {
    name: "POST /session/end/confirm",
    method: "POST",
    path: "/session/end/confirm",
    params: ["xsrf", "logout"],
  },
  { name: "GET /me", method: "GET", path: "/me", params: ["access_token"] },
  { name: "POST /me", method: "POST", path: "/me", params: ["access_token"] },
  {
    name: "POST /token/revocation",
    method: "POST",
    path: "/token/revocation",
    params: ["token", "token_type_hint", "client_id", "client_secret"],
  },
  { name: "GET discovery", method: "GET", path: "/.well-known/openid-configuration", params: ["x"] },
  { name: "GET /jwks", method: "GET", path: "/jwks", params: ["x"] },
  { name: "GET interaction", method: "GET", path: "/interaction/{uid}", params: ["x"], interaction: true },
  {
    name: "POST interaction login",
    method: "POST",
    path: "/interaction/{uid}/login",
    params: ["email", "password"],
    interaction: true,
    runShare: 0.25,
  },
  {
    name: "POST interaction consent",
    method: "POST",
    path: "/interaction/{uid}/consent",
    params: ["decision"],
    interaction: true,
  },
  {
    name: "POST interaction abort",
    method: "POST",
    path: "/interaction/{uid}/abort",
    params: ["x"],
    interaction: true,
  },
];

interface FuzzRequest {
  params: Record<string, Value | undefined>;
  /** A urlencoded form, JSON, or no content type at all. */
  encoding: "form" | "json" | "none";
  /** A live interaction (its cookies and its uid in the path) or hostile text as the uid. */
  live: boolean;
  uid: string;
}

function requestArbitrary(endpoint: Endpoint): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    params: fc.record(Object.fromEntries(endpoint.params.map((name) => [name, parameterValue(name)])), {
      requiredKeys: [],
    }),
    encoding: fc.constantFrom("form", "form", "form", "json", "none"),
    live: fc.boolean(),
    uid: hostileText,
  });
}

/** A fresh interaction at the sign-in page: its session (cookies) and uid. */
async function liveInteraction(): Promise<{ session: BrowserSession; uid: string }> {
  const pending = await startAuthorization({
    issuer: manager.issuerUrl,
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    resource: resourceIndicator(ACCOUNT_PORTAL_AUDIENCE),
  });
  const uid = pending.page?.url.pathname.split("/").pop();
  if (uid === undefined) throw new Error("the authorization did not stop at a sign-in page");
  return { session: pending.session, uid };
}

function describeRequest(endpoint: Endpoint, request: FuzzRequest): string {
  const shown = Object.fromEntries(
    Object.entries(request.params).map(([name, value]) => [
      name,
      JSON.stringify(value).slice(0, 120) + (JSON.stringify(value).length > 120 ? "…" : ""),
    ]),
  );
  return `${endpoint.name} (${request.encoding}, live interaction: ${request.live}) ${JSON.stringify(shown)}`;
}

async function send(endpoint: Endpoint, request: FuzzRequest): Promise<Response> {
  const live = endpoint.interaction && request.live ? await liveInteraction() : undefined;
  // A path holds UTF-8: a lone surrogate is sent as U+FFFD, as a browser would.
  const uid = live?.uid ?? encodeURIComponent(Buffer.from(request.uid).toString() || "x");
  const url = new URL(`${manager.issuerUrl}${endpoint.path.replace("{uid}", uid)}`);
  const pairs = pairsOf(request.params);
  const init: RequestInit = { method: endpoint.method, signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) };
  if (endpoint.method === "GET") {
    for (const [name, value] of pairs) url.searchParams.append(name, value);
  } else if (request.encoding === "json") {
    init.headers = { "content-type": "application/json" };
    init.body = JSON.stringify(request.params);
  } else {
    if (request.encoding === "form") init.headers = { "content-type": "application/x-www-form-urlencoded" };
    init.body = new URLSearchParams(pairs).toString();
  }
  return live ? live.session.fetch(url, init) : fetch(url, { ...init, redirect: "manual" });
}

describe.each(ENDPOINTS)("$name", (endpoint) => {
  it(
    "never answers a 5xx and never hangs",
    async () => {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(endpoint), async (request) => {
          let response: Response;
          try {
            response = await send(endpoint, request);
          } catch (err) {
            throw new Error(`no answer (${String(err)}) to ${describeRequest(endpoint, request)}`);
          }
          const body = await response.text();
          expect(
            response.status,
            `${describeRequest(endpoint, request)} answered ${body.slice(0, 300)}`,
          ).toBeLessThan(500);
        }),
        { seed: SEED, numRuns: Math.ceil(RUNS_PER_ENDPOINT * (endpoint.runShare ?? 1)), endOnFailure: true },
      );
    },
    ENDPOINT_TIMEOUT_MS,
  );
});
