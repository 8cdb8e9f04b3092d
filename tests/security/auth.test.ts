import { createServer } from "node:net";
import { connect } from "@nats-io/transport-node";
import { sampleSubmission } from "@tjm/devstack/fixtures/plans";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { createLogger } from "@tjm/platform";
import { exportSPKI, generateKeyPair, importJWK, type JWK, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managerOptionsFromConfig, startManager } from "../../manager/src/manager.ts";
import { createBroker } from "../../manager/src/platform/broker.ts";
import { createTestSchema, TestManager, testManagerConfig, testServices } from "../harness/manager.ts";

let manager: TestManager;
let projectId: string;
/** A key pair nobody publishes; generated once because RSA key generation is slow. */
let unpublishedKey: CryptoKey;

beforeAll(async () => {
  manager = await TestManager.start();
  ({ projectId } = await manager.createProject());
  ({ privateKey: unpublishedKey } = await generateKeyPair("RS256"));
});
afterAll(() => manager?.close());

/** A queued job made through the API, so each accepted request has a fresh job to act on. */
async function submitJob(): Promise<string> {
  const response = await manager.request("/api/v1/operations/jobs", {
    method: "POST",
    json: sampleSubmission(projectId),
  });
  expect(response.status).toBe(201);
  return (await response.json()).id;
}

interface OperatorRoute {
  name: string;
  method: "GET" | "POST";
  /** Prepares what the route acts on and answers the path to call. */
  target(): Promise<string>;
  body?: () => unknown;
  success: number;
}

const operatorRoutes: OperatorRoute[] = [
  {
    name: "submit",
    method: "POST",
    target: async () => "/api/v1/operations/jobs",
    body: () => sampleSubmission(projectId),
    success: 201,
  },
  { name: "list", method: "GET", target: async () => "/api/v1/operations/jobs", success: 200 },
  {
    name: "get",
    method: "GET",
    target: async () => `/api/v1/operations/jobs/${await submitJob()}`,
    success: 200,
  },
  {
    name: "cancel",
    method: "POST",
    target: async () => `/api/v1/operations/jobs/${await submitJob()}/cancel`,
    success: 202,
  },
  {
    name: "retry",
    method: "POST",
    target: async () => {
      const jobId = await submitJob();
      await manager.forceJobState(jobId, "FAILED", "FAILED");
      return `/api/v1/operations/jobs/${jobId}/retry`;
    },
    success: 202,
  },
];

/** Calls the route with exactly the authorization header given (none when undefined). */
async function callRoute(route: OperatorRoute, authorization: string | undefined): Promise<Response> {
  const headers = new Headers();
  if (authorization !== undefined) headers.set("authorization", authorization);
  let body: string | undefined;
  if (route.body) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(route.body());
  }
  return fetch(`${manager.baseUrl}${await route.target()}`, { method: route.method, headers, body });
}

/** The error envelope and nothing else: no stack, no cause, no library internals. */
async function expectErrorBody(
  response: Response,
  statusCode: number,
  error: string,
  code: string,
): Promise<{ message: string }> {
  expect(response.status).toBe(statusCode);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = await response.json();
  const requestId = response.headers.get("x-request-id");
  expect(body).toStrictEqual({ statusCode, error, message: expect.any(String), code, requestId });
  expect(body.message).not.toMatch(/\n|\bat .+:\d+:\d+|node_modules|\.ts\b|Error:/);
  return body;
}

const now = () => Math.floor(Date.now() / 1000);

/** Claims an operator token would carry; only the signature makes the tokens below bad. */
function operatorClaims(): JWTPayload {
  return {
    iss: manager.issuer.issuer,
    sub: "operator@example.com",
    aud: [OPERATIONS_AUDIENCE],
    iat: now(),
    exp: now() + 600,
  };
}

async function hs256Token(secret: Uint8Array): Promise<string> {
  return new SignJWT(operatorClaims()).setProtectedHeader({ alg: "HS256", kid: "test-key" }).sign(secret);
}

/** The algorithm-confusion attack: HMAC keyed with the issuer's own published RSA key. */
async function hs256TokenKeyedWithIssuerPublicKey(): Promise<string> {
  const jwks = (await (await fetch(`${manager.issuer.issuer}/jwks`)).json()) as { keys: JWK[] };
  const [published] = jwks.keys;
  if (!published) throw new Error("the test issuer publishes no key");
  const pem = await exportSPKI((await importJWK(published, "RS256")) as CryptoKey);
  return hs256Token(new TextEncoder().encode(pem));
}

async function tokenSignedWithUnknownKeyId(): Promise<string> {
  return new SignJWT(operatorClaims())
    .setProtectedHeader({ alg: "RS256", kid: "key-nobody-published" })
    .sign(unpublishedKey);
}

const bearer = (token: string) => `Bearer ${token}`;

/** Each bad credential, and the reason and code the 401 must give, so no case passes for a different reason. */
const unauthenticatedCases: [string, () => Promise<string | undefined>, RegExp, string?][] = [
  ["no authorization header", async () => undefined, /missing bearer token/i, "auth.token_missing"],
  ["a Basic authorization header", async () => "Basic x", /must be 'Bearer <token>'/, "auth.token_missing"],
  ["the word Bearer without a token", async () => "Bearer", /must be 'Bearer <token>'/, "auth.token_missing"],
  [
    "a Bearer header with two tokens",
    async () => "Bearer a b",
    /must be 'Bearer <token>'/,
    "auth.token_missing",
  ],
  ["a token that is not a JWT", async () => bearer("garbage"), /malformed/],
  [
    "an expired token",
    async () => bearer(await manager.issuer.token({ expiresInSeconds: -60 })),
    /expired/,
    "auth.token_expired",
  ],
  [
    "a token not valid for another minute",
    async () => bearer(await manager.issuer.token({ notBeforeSeconds: 60 })),
    /"nbf"/,
  ],
  [
    "a token from another issuer",
    async () => bearer(await manager.issuer.token({ issuer: "https://idp.example.com" })),
    /the issuer https:\/\/idp\.example\.com is not trusted/,
  ],
  [
    "a token signed by a key the issuer never published",
    async () => bearer(await manager.issuer.tokenSignedByStranger()),
    /signature verification failed/,
  ],
  [
    "a token whose key id the issuer never published",
    async () => bearer(await tokenSignedWithUnknownKeyId()),
    /no key of the issuer matches/,
  ],
  ["an unsigned alg:none token", async () => bearer(manager.issuer.unsignedToken()), /algorithm/],
  [
    "an HS256 token signed with a shared secret",
    async () => bearer(await hs256Token(new TextEncoder().encode("a shared secret of thirty-two bytes"))),
    /algorithm/,
  ],
  [
    "an HS256 token keyed with the issuer's public key",
    async () => bearer(await hs256TokenKeyedWithIssuerPublicKey()),
    /algorithm/,
  ],
  ["a token without exp", async () => bearer(await manager.issuer.token({ omitExpiry: true })), /"exp"/],
];

describe.each(operatorRoutes)("operator auth on $name ($method)", (route) => {
  it.each(unauthenticatedCases)("answers 401 to %s", async (_, authorization, reason, code) => {
    const response = await callRoute(route, await authorization());
    const body = await expectErrorBody(response, 401, "Unauthorized", code ?? "auth.token_invalid");
    expect(body.message).toMatch(reason);
  });

  it("answers 403 to a valid token for another audience", async () => {
    const token = await manager.issuer.token({ audience: "account-portal" });
    await expectErrorBody(await callRoute(route, bearer(token)), 403, "Forbidden", "auth.audience_missing");
  });

  it("answers 403 to a valid token with an empty audience", async () => {
    const token = await manager.issuer.token({ audience: [] });
    await expectErrorBody(await callRoute(route, bearer(token)), 403, "Forbidden", "auth.audience_missing");
  });

  it("accepts a token whose audience array includes the operations audience", async () => {
    const token = await manager.issuer.token({ audience: ["account-portal", OPERATIONS_AUDIENCE] });
    expect((await callRoute(route, bearer(token))).status).toBe(route.success);
  });

  it("accepts a token whose audience is the operations audience as a single string", async () => {
    const token = await manager.issuer.token({ audience: OPERATIONS_AUDIENCE });
    expect((await callRoute(route, bearer(token))).status).toBe(route.success);
  });
});

describe("rejected requests change nothing", () => {
  it("a submit with an invalid token stores no job", async () => {
    const [before] = await manager.sql`select count(*)::int as count from jobs`;
    const response = await callRoute(operatorRoutes[0] as OperatorRoute, bearer("garbage"));
    expect(response.status).toBe(401);
    const [after] = await manager.sql`select count(*)::int as count from jobs`;
    expect(after?.count).toBe(before?.count);
  });

  it("a cancel with a token for another audience leaves the job QUEUED", async () => {
    const jobId = await submitJob();
    const token = await manager.issuer.token({ audience: "account-portal" });
    const response = await fetch(`${manager.baseUrl}/api/v1/operations/jobs/${jobId}/cancel`, {
      method: "POST",
      headers: { authorization: bearer(token) },
    });
    expect(response.status).toBe(403);
    const [job] = await manager.sql`select state from jobs where id = ${jobId}`;
    expect(job?.state).toBe("QUEUED");
  });
});

describe("connections", () => {
  it("keeps answering a client that reuses its connection after a 401 to a large submit", async () => {
    // fetch keeps the connection alive and sends the next request on it, as the SDK does.
    const rejected = await fetch(`${manager.baseUrl}/api/v1/operations/jobs`, {
      method: "POST",
      headers: { authorization: bearer("garbage"), "content-type": "application/json" },
      body: JSON.stringify(sampleSubmission(projectId, { padding: "x".repeat(900_000) })),
    });
    expect(rejected.status).toBe(401);
    await rejected.text();
    const next = await manager.request("/api/v1/operations/jobs?limit=1");
    expect(next.status).toBe(200);
  });
});

describe("public routes", () => {
  it.each(["/api/health/live", "/api/v1/openapi.json", "/api/docs"])(
    "%s answers 200 without a token, and with an invalid one",
    async (path) => {
      expect((await fetch(`${manager.baseUrl}${path}`)).status).toBe(200);
      const withBadToken = await fetch(`${manager.baseUrl}${path}`, {
        headers: { authorization: bearer("garbage") },
      });
      expect(withBadToken.status).toBe(200);
    },
  );

  it("/api/health/ready answers 200 without a token once the broker is connected", async () => {
    // The broker connects in the background, so readiness may need a moment; never a 401.
    await expect
      .poll(async () => (await fetch(`${manager.baseUrl}/api/health/ready`)).status, { timeout: 10_000 })
      .toBe(200);
  });
});

/** A loopback URL nothing listens on: the port was free a moment ago and is closed again. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe("an issuer whose keys cannot be fetched", () => {
  const unreachable: [string, (url: string) => { issuer: string; jwksUrl?: string }][] = [
    ["OIDC discovery", (url) => ({ issuer: url })],
    ["the JWKS URL override", (url) => ({ issuer: "https://idp.example.com", jwksUrl: `${url}/jwks` })],
  ];

  it.each(unreachable)(
    "answers 503 with the error body, logging the cause, when %s is unreachable",
    async (_, authFor) => {
      const url = await closedPortUrl();
      const auth = authFor(url);
      const logLines: string[] = [];
      const logger = createLogger("error", (line) => logLines.push(line));
      const { databaseUrl, natsUrl } = testServices();
      const schema = await createTestSchema(databaseUrl);
      const broker = createBroker(connect, natsUrl, logger);
      try {
        const config = testManagerConfig({
          databaseUrl,
          natsUrl,
          schema: schema.schema,
          subjectPrefix: schema.schema,
          issuer: auth.issuer,
          providerEnabled: false,
          env: auth.jwksUrl === undefined ? {} : { OIDC_JWKS_URL: auth.jwksUrl },
        });
        const { app } = await startManager(
          managerOptionsFromConfig(config, {
            sql: schema.sql,
            broker,
            logger,
            scalarBundle: async () => new Uint8Array(),
            background: false,
          }),
        );
        const token = await new SignJWT({ ...operatorClaims(), iss: auth.issuer })
          .setProtectedHeader({ alg: "RS256", kid: "test-key" })
          .sign(unpublishedKey);

        const response = await app.request("/api/v1/operations/jobs", {
          headers: { authorization: bearer(token) },
        });

        const body = JSON.stringify(
          await expectErrorBody(response, 503, "Service Unavailable", "auth.verification_unavailable"),
        );
        expect(body).not.toContain(url);
        expect(body).not.toMatch(/ECONNREFUSED|fetch failed/);
        expect(logLines.join("\n")).toContain("token verification unavailable");
      } finally {
        await broker.close();
        await schema.drop();
      }
    },
  );
});
