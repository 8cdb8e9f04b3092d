import { jetstream } from "@nats-io/jetstream";
import { createUser } from "@nats-io/nkeys";
import { connect, credsAuthenticator, jwtAuthenticator } from "@nats-io/transport-node";
import { samplePlan } from "@tjm/devstack/fixtures/plans";
import { registrationBody } from "@tjm/devstack/fixtures/worker-registration";
import {
  type ManagerProcess,
  type ManagerRuntime,
  runScript,
  startManagerProcess,
} from "@tjm/devstack/manager-process";
import { type OperatorModeNats, startOperatorModeNats } from "@tjm/devstack/nats-operator";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { freePort, waitFor } from "@tjm/devstack/services";
import { streams, type WorkerRegistrationResponse, workerInboxPrefix } from "@tjm/protocol";
import { createTjmClient } from "@tjm/sdk";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  TEST_CLIENT_SECRET_HMAC_KEY,
  TEST_PROVIDER_KEY_ENCRYPTION_KEY,
} from "./harness/identity.ts";
import { createTestSchema, testServices } from "./harness/manager.ts";
import { heartbeat } from "./harness/workers.ts";

/** What a Manager serving the built-in provider needs on top of the rest. */
const PROVIDER_SETTINGS = {
  PROVIDER_KEY_ENCRYPTION_KEY: TEST_PROVIDER_KEY_ENCRYPTION_KEY,
  CLIENT_SECRET_HMAC_KEY: TEST_CLIENT_SECRET_HMAC_KEY,
};

/** The issuer URL of a Node Manager's provider on `port` (config.ts: a path of its own, /oidc). */
const providerIssuer = (port: number) => `http://127.0.0.1:${port}/oidc`;

describe.each<ManagerRuntime>(["node", "deno"])("the Manager on %s, through the generated SDK", (runtime) => {
  let nats: OperatorModeNats;
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let manager: ManagerProcess;
  /** The Node Manager whose built-in provider issues the tokens: `manager` itself on Node. */
  let provider: ManagerProcess;
  let issuer: string;
  /** An operator's access token from the provider, got through the authorization-code flow. */
  let operatorToken: string;
  let projectId: string;

  beforeAll(async () => {
    const services = testServices();
    schema = await createTestSchema(services.databaseUrl);
    // NATS in operator mode, as in production: the Manager connects with its .creds file and
    // signs Worker JWTs with the account signing key.
    nats = await startOperatorModeNats();
    // The provider's issuer URL names its port, so the port is chosen here.
    const providerPort = await freePort();
    issuer = providerIssuer(providerPort);
    const env = {
      DATABASE_URL: services.databaseUrl,
      DATABASE_SCHEMA: schema.schema,
      NATS_URL: nats.url,
      NATS_CREDS_FILE: nats.managerCredsFile,
      NATS_ACCOUNT_PUBLIC_KEY: nats.accountPublicKey,
      NATS_ACCOUNT_SIGNING_KEY_SEED: nats.accountSigningSeed,
      NATS_SUBJECT_PREFIX: schema.schema,
      OIDC_ISSUER_URL: issuer,
      OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
      ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
      // No job runs here, so storage is never reached.
      S3_ENDPOINT: "http://127.0.0.1:1",
      S3_ACCESS_KEY_ID: "unused",
      S3_SECRET_ACCESS_KEY: "unused",
    };
    const nodeEnv = { ...env, ...PROVIDER_SETTINGS };
    const created = await runScript(
      ["manager", "--", "projects", "create", "--org", "acme", "--name", runtime],
      nodeEnv,
    );
    expect(created.code, created.stderr).toBe(0);
    ({ projectId } = JSON.parse(created.stdout));
    provider = await startManagerProcess("node", nodeEnv, providerPort);
    // Deno serves no provider: it trusts the Node Manager's, on the same database.
    manager =
      runtime === "node"
        ? provider
        : await startManagerProcess("deno", { ...env, PROVIDER_ENABLED: "false" });
    const account = await createTestAccount(schema.sql, { roles: ["operator"] });
    const client = await createTestClient(schema.sql, { resources: [OPERATIONS_AUDIENCE] });
    operatorToken = (await signInAs(issuer, client, account, resourceIndicator(OPERATIONS_AUDIENCE)))
      .accessToken;
  }, 90_000);
  afterAll(async () => {
    await manager?.stop();
    await provider?.stop();
    await nats?.stop();
    await schema?.drop();
  });

  it("accepts an operator token of the Node Manager's built-in provider", async () => {
    expect(decodeJwt(operatorToken)).toMatchObject({ iss: issuer, aud: OPERATIONS_AUDIENCE });
    const response = await fetch(`${manager.baseUrl}/api/v1/operations/jobs`, {
      headers: { authorization: `Bearer ${operatorToken}` },
    });
    expect(response.status).toBe(200);
  });

  it("answers health, submit, get, list, cancel and retry-409", async () => {
    const client = createTjmClient({ baseUrl: manager.baseUrl, token: operatorToken });

    const ready = await client.GET("/api/health/ready");
    expect(ready.response.status).toBe(200);
    expect(ready.data?.status).toBe("ok");

    const submitted = await client.POST("/api/v1/operations/jobs", {
      body: { projectId, priority: 10, executionPlan: samplePlan() as never },
    });
    expect(submitted.response.status).toBe(201);
    const jobId = submitted.data?.id ?? "";
    expect(submitted.data).toMatchObject({
      state: "QUEUED",
      priority: 10,
      currentAttempt: { state: "CREATED", progress: 0 },
    });

    const got = await client.GET("/api/v1/operations/jobs/{jobId}", { params: { path: { jobId } } });
    expect(got.data?.attempts).toHaveLength(1);
    expect(got.data?.executionPlan.outputs[0]?.id).toBe("720p");

    const listed = await client.GET("/api/v1/operations/jobs", { params: { query: { state: "QUEUED" } } });
    expect(listed.data?.items.map((job) => job.id)).toEqual([jobId]);
    expect(listed.data?.total).toBe(1);

    const cancelled = await client.POST("/api/v1/operations/jobs/{jobId}/cancel", {
      params: { path: { jobId } },
    });
    expect(cancelled.response.status).toBe(202);
    expect(cancelled.data?.state).toBe("CANCELLED");

    const retried = await client.POST("/api/v1/operations/jobs/{jobId}/retry", {
      params: { path: { jobId } },
    });
    expect(retried.response.status).toBe(409);
    expect(retried.error).toMatchObject({ statusCode: 409, error: "Conflict" });
  });

  it("announces its changes on the events stream through the outbox relay, and to its SSE subscribers", async () => {
    // Node writes the stream into its response, Deno reads a web stream: both are followed here.
    const sse = await fetch(`${manager.baseUrl}/api/v1/operations/events`, {
      headers: { authorization: `Bearer ${operatorToken}` },
    });
    expect(sse.headers.get("content-type")).toContain("text/event-stream");
    expect(sse.headers.get("x-request-id")).toBeTruthy();
    const reader = (sse.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = "";
    const reading = (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
        received += decoder.decode(chunk.value, { stream: true });
    })().catch(() => {});
    await waitFor("the SSE stream to connect", async () => received.includes(": connected"));
    const client = createTjmClient({ baseUrl: manager.baseUrl, token: operatorToken });
    const submitted = await client.POST("/api/v1/operations/jobs", {
      body: { projectId, executionPlan: samplePlan() as never },
    });
    const jobId = submitted.data?.id ?? "";
    await client.POST("/api/v1/operations/jobs/{jobId}/cancel", { params: { path: { jobId } } });
    try {
      await waitFor("both events on the SSE stream", async () =>
        ["job.created", "job.updated"].every((kind) =>
          received.split("\n\n").some((frame) => frame.includes(`event: ${kind}`) && frame.includes(jobId)),
        ),
      );
    } finally {
      await reader.cancel();
      await reading;
    }

    const nc = await connect({
      servers: nats.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(nats.managerCreds)),
    });
    try {
      const stream = streams(schema.schema).events.name;
      const kinds: string[] = [];
      await waitFor("job events", async () => {
        kinds.length = 0;
        const consumer = await jetstream(nc).consumers.get(stream);
        const batch = await consumer.fetch({ max_messages: 100, expires: 1000 });
        for await (const message of batch) {
          const envelope = message.json<{ kind: string; data: { jobId: string } }>();
          if (envelope.data.jobId === jobId) kinds.push(envelope.kind);
        }
        return kinds.length === 2;
      });
      expect(kinds).toEqual(["job.created", "job.updated"]);
    } finally {
      await nc.close();
    }
  });

  it("enrolls a Worker whose user JWT the NATS server accepts, and hears its heartbeats", async () => {
    const client = createTjmClient({ baseUrl: manager.baseUrl, token: operatorToken });
    const issued = await client.POST("/api/v1/operations/enrollment-tokens", { body: { pool: "cpu" } });
    expect(issued.response.status).toBe(201);
    const keyPair = createUser();
    const registered = await client.POST("/api/v1/worker/registrations", {
      body: registrationBody(keyPair, { enrollmentToken: issued.data?.token ?? "" }),
    });
    expect(registered.response.status).toBe(201);
    const worker = registered.data as WorkerRegistrationResponse;
    expect(worker.natsUrl).toBe(nats.url);
    const nc = await connect({
      servers: worker.natsUrl,
      authenticator: jwtAuthenticator(worker.userJwt ?? "", keyPair.getSeed()),
      inboxPrefix: workerInboxPrefix(worker.subjectPrefix, worker.workerId),
    });
    try {
      await waitFor("the heartbeat", async () => {
        heartbeat(nc, worker.subjectPrefix, worker, 5);
        const shown = await client.GET("/api/v1/operations/workers/{workerId}", {
          params: { path: { workerId: worker.workerId } },
        });
        return shown.data?.freeCapacity === 5 && shown.data.connectivity === "ONLINE";
      });
    } finally {
      await nc.close();
    }
  });

  it("serves the OpenAPI document and Scalar with its bundle from the installed package, no CDN", async () => {
    const document = await (await fetch(`${manager.baseUrl}/api/v1/openapi.json`)).json();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toContain("/api/v1/operations/jobs/{jobId}/retry");

    const page = await (await fetch(`${manager.baseUrl}/api/docs`)).text();
    expect(page).toContain('src="/api/docs/scalar.js"');
    expect(page).not.toMatch(/https?:\/\/(cdn|unpkg|fonts)\./);
    const bundle = await fetch(`${manager.baseUrl}/api/docs/scalar.js`);
    expect(bundle.headers.get("content-type")).toContain("javascript");
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  });

  it("shuts down gracefully on SIGTERM", async () => {
    await manager.stop();
    expect(manager.output()).toContain('"msg":"shutting down"');
    expect(manager.output()).not.toContain("shutdown took too long");
  });
});

describe("a Deno Manager with PROVIDER_ENABLED=true", () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;

  beforeAll(async () => {
    schema = await createTestSchema(testServices().databaseUrl);
  });
  afterAll(() => schema?.drop());

  it("exits 2 naming PROVIDER_ENABLED and Node, the runtime that serves the provider", async () => {
    const services = testServices();
    const env = {
      DATABASE_URL: services.databaseUrl,
      DATABASE_SCHEMA: schema.schema,
      NATS_URL: services.natsUrl,
      NATS_AUTH: "none",
      OIDC_ISSUER_URL: providerIssuer(await freePort()),
      OIDC_OPERATIONS_ADMIN_AUDIENCE: OPERATIONS_AUDIENCE,
      ENROLLMENT_TOKEN_SECRET: TEST_ENROLLMENT_SECRET,
      S3_ENDPOINT: "http://127.0.0.1:1",
      S3_ACCESS_KEY_ID: "unused",
      S3_SECRET_ACCESS_KEY: "unused",
      ...PROVIDER_SETTINGS,
      PROVIDER_ENABLED: "true",
    };
    const refused = await startManagerProcess("deno", env).then(
      async (started) => {
        await started.stop();
        return new Error("the Deno Manager started with PROVIDER_ENABLED=true");
      },
      (err: Error) => err,
    );
    expect(refused.message).toMatch(/^the deno Manager exited with 2:/);
    expect(refused.message).toContain("PROVIDER_ENABLED=true, but the deno entrypoint");
    expect(refused.message).toMatch(/needs Node/);
  }, 60_000);
});
